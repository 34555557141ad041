import Export
import Foundation
import LinuxSystem
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// What one stick export did.
package struct StickExportReport: Sendable {
    package var device: String
    package var filesystem: FilesystemKind
    package var exported: [(sessionID: String, directory: String, frames: Int, events: Int)]
    package var seconds: Double
    /// Sessions on the card that could not be exported (damaged files); every other one was.
    package var failed: [(sessionID: String, error: String)] = []
}

/// Exports every session not exported yet to a USB stick, then unmounts it.
///
///     pick the partition (FAT or exFAT only, never formatted) → mount nosuid,nodev,noexec →
///     Exporter per session (temp name, verify against the manifest, rename) → syncfs →
///     unmount → mark the sessions exported (`SessionStore.markExported`, atomically)
///
/// The sessions on the SD card are only read until everything is on the stick and the stick is
/// unmounted: a stick pulled at any earlier point changes nothing on the card, and the next stick
/// gets every session again.
package final class StickExporter: Sendable {
    package let store: SessionStore
    package let mountPoint: String
    package let options: ExportOptions
    /// Exports go into this folder on the stick.
    package static let folder = "facekit"
    let sysBlock: String
    let devDirectory: String

    package init(store: SessionStore, mountPoint: String, options: ExportOptions,
                sysBlock: String = "/sys/block", devDirectory: String = "/dev") {
        self.store = store; self.mountPoint = mountPoint; self.options = options
        self.sysBlock = sysBlock; self.devDirectory = devDirectory
    }

    /// Sessions that are finished (stopped or recovered as interrupted) and not marked exported.
    package func pendingSessions() throws -> [String] {
        try store.list().compactMap { l in
            guard case .success(let s) = l.result, s.state == .stopped || s.state == .interrupted else { return nil }
            return store.isExported(l.sessionID) ? nil : l.sessionID
        }
    }

    /// The partition to use on disk `disk` (e.g. "sda"): the first FAT/exFAT partition, or the
    /// disk itself when it has no partition table. Throws with what was found otherwise.
    package func choosePartition(disk: String) throws(KioskError) -> (node: String, kind: FilesystemKind) {
        if let ro = try? String(contentsOfFile: "\(sysBlock)/\(disk)/ro", encoding: .utf8),
           ro.trimmingCharacters(in: .whitespacesAndNewlines) == "1" {
            throw KioskError("the stick \(devDirectory)/\(disk) is read-only (write-protect switch?); nothing was written")
        }
        let parts = ((try? FileManager.default.contentsOfDirectory(atPath: "\(sysBlock)/\(disk)")) ?? []).filter {
            $0.hasPrefix(disk) && FileManager.default.fileExists(atPath: "\(sysBlock)/\(disk)/\($0)/partition")
        }.sorted()
        var found: [String] = []
        for name in parts.isEmpty ? [disk] : parts {
            let node = devDirectory + "/" + name
            let kind = try Self.probe(node)
            if kind.mountType != nil { return (node, kind) }
            found.append("\(node): \(kind)")
        }
        throw KioskError("no FAT or exFAT filesystem on the stick (\(found.joined(separator: "; "))); facekit never formats a stick: format it as FAT32 or exFAT on a computer")
    }

    /// Reads the first sectors of a block device and identifies its filesystem. The node may
    /// appear a moment after the uevent; waits up to a second for it.
    static func probe(_ node: String) throws(KioskError) -> FilesystemKind {
        var fd: Int32 = -1
        for attempt in 0..<20 {
            switch Syscalls.open(node, O_RDONLY) {
            case .success(let f): fd = f
            case .failure(let e) where e == .noSuchFile && attempt < 19: MonotonicClock.sleep(nanoseconds: 50_000_000); continue
            case .failure(let e): throw KioskError("cannot open \(node) to read its filesystem", cause: e)
            }
            break
        }
        defer { Syscalls.close(fd) }
        var b = [UInt8](repeating: 0, count: FilesystemProbe.probeSize)
        let n: Int
        switch b.withUnsafeMutableBytes({ Syscalls.preadFully(fd, $0, at: 0) }) {
        case .success(let got): n = got
        case .failure(let e): throw KioskError("cannot read \(node) (pulled out?)", cause: e)
        }
        return FilesystemProbe.identify(Array(b.prefix(n)))
    }

    /// One step of a stick export: the session about to be written, the how-many-th of how many.
    package struct Progress: Sendable, Equatable {
        package var session: String
        package var index: Int
        package var total: Int
    }

    /// The whole job for the stick on `disk`. `progress` is called before each session;
    /// `cancelled` (the stick's remove uevent arrived) is checked between sessions, so a pulled
    /// stick does not keep the job going through every remaining session.
    package func run(disk: String, progress: (Progress) -> Void = { _ in },
                    cancelled: () -> Bool = { false }) throws(KioskError) -> StickExportReport {
        let t0 = Int64(MonotonicClock.now())
        let (node, kind) = try choosePartition(disk: disk)
        let pending: [String]
        let damaged: [(sessionID: String, error: String)]
        do { (pending, damaged) = try sessionsToExport() }
        catch { throw KioskError("cannot list the sessions on the card: \(error)") }
        try mount(node, kind)
        var done: [(String, String, Int, Int)] = []
        var failed = damaged
        do throws(KioskError) {
            let target = mountPoint + "/" + Self.folder
            if case .failure(let e) = Syscalls.mkdir(target), e != .fileExists {
                throw KioskError(e == .readOnlyFileSystem ? "the stick \(node) is read-only; nothing was written" :
                                 e == .noSpace ? "the stick \(node) is full; use a stick with free space" :
                                 "cannot create \(target) on the stick", cause: e)
            }
            removeStalePartials(in: target)
            let r = try exportSessions(pending, to: target, node: node, progress: progress, cancelled: cancelled)
            done = r.done
            failed += r.failed
            if case .failure(let e) = Syscalls.syncFilesystem(mountPoint) {
                throw KioskError("flushing the stick \(node) failed (pulled out?); the export is not complete", cause: e)
            }
            if case .failure(let e) = Syscalls.unmount(mountPoint) {
                throw KioskError("unmounting the stick \(node) failed; do not pull it", cause: e)
            }
        } catch {
            // Gone or failing: detach, so the mount point is free for the next stick.
            _ = Syscalls.unmount(mountPoint, flags: Int32(MNT_DETACH))
            throw error
        }
        // Only now, with everything on the stick and the stick unmounted, does the card change.
        let stamp = ISO8601DateFormatter().string(from: Date())
        for (id, dir, frames, events) in done {
            let record = SessionStore.ExportRecord(exportedAt: stamp, directory: Self.folder + "/" + dir,
                                                   format: options.format.rawValue, frames: frames, events: events)
            do throws(RecordingError) {
                try store.markExported(id, record)
            } catch {
                throw KioskError("the stick holds the export, but marking session \(id) as exported on the card failed: \(error)")
            }
        }
        return StickExportReport(device: node, filesystem: kind, exported: done,
                                 seconds: Double(Int64(MonotonicClock.now()) - t0) / 1e9, failed: failed)
    }

    /// Finished sessions not exported yet, and the sessions whose files fail their checks (they
    /// cannot be exported as they are; the report names them so the kiosk can say so).
    func sessionsToExport() throws -> (pending: [String], damaged: [(sessionID: String, error: String)]) {
        var pending: [String] = [], damaged: [(sessionID: String, error: String)] = []
        for l in try store.list() {
            switch l.result {
            case .success(let s):
                if (s.state == .stopped || s.state == .interrupted) && !store.isExported(l.sessionID) {
                    pending.append(l.sessionID)
                }
            case .failure(let e) where e.kind == .corrupt:
                damaged.append((l.sessionID, e.description))
            case .failure:
                break  // busy (being recorded) or unreadable for now: the next stick tries again
            }
        }
        return (pending, damaged)
    }

    /// Exports `pending` into `target` (the stick's folder), one session at a time. A session whose
    /// own files fail (damaged on the card) is reported and skipped, so one bad session never keeps
    /// the others off the stick; anything else (stick full, pulled, read-only) ends the job.
    func exportSessions(_ pending: [String], to target: String, node: String, progress: (Progress) -> Void,
                        cancelled: () -> Bool) throws(KioskError)
        -> (done: [(String, String, Int, Int)], failed: [(sessionID: String, error: String)]) {
        var done: [(String, String, Int, Int)] = []
        var failed: [(sessionID: String, error: String)] = []
        let onStick = completeExports(in: target)
        let exporter = Exporter(store: store)
        for (index, id) in pending.enumerated() {
            if cancelled() { throw KioskError("the stick \(node) was removed during the export; nothing is marked exported, plug it (or another) in again") }
            // Already there from an attempt whose stick was pulled later: keep that copy, if it
            // holds every frame the card has (it read back intact; see `completeExports`).
            if let dir = onStick[id], (try? store.open(id))?.frameCount == dir.frames {
                done.append((id, dir.name, dir.frames, dir.events))
                continue
            }
            progress(Progress(session: id, index: index, total: pending.count))
            do {
                let r = try exporter.export(sessionID: id, to: target, options: options)
                // Relative to the stick's folder: a BIDS session lands in sub-<label>/ses-<n>.
                let dir = r.directory.hasPrefix(target + "/") ? String(r.directory.dropFirst(target.count + 1)) : (r.directory as NSString).lastPathComponent
                done.append((id, dir, r.frameCount, r.eventCount))
            } catch let e as RecordingError where e.kind == .diskFull {
                throw KioskError("the stick \(node) is full while exporting session \(id); nothing is marked exported: use a larger stick (\(e.message))")
            } catch let e as RecordingError where isSessionFault(e, id) {
                failed.append((id, e.description))
            } catch {
                throw KioskError("exporting session \(id) to \(node) failed (stick pulled out, read-only or damaged?); nothing is marked exported: \(error)")
            }
        }
        return (done, failed)
    }

    /// The error is about the session's own files on the card (damaged, or unreadable there), not
    /// about the stick.
    func isSessionFault(_ e: RecordingError, _ id: String) -> Bool {
        guard let path = e.path, path.hasPrefix(store.root + "/" + id + "/") || path == store.root + "/" + id else { return false }
        return e.kind == .corrupt || e.kind == .io
    }

    /// Exports on the stick that read back as their manifest says (every file's size and SHA-256,
    /// session.h5's shapes), by session ID. A pulled stick keeps the sessions finished before the
    /// pull (fsynced, renamed into place); but a stick can also hold a directory whose sizes are
    /// right and whose clusters were never written (FAT loses writes in flight at a pull or a power
    /// cut), or a copied or forged manifest: sizes alone would mark such a session exported.
    func completeExports(in target: String) -> [String: (name: String, frames: Int, events: Int)] {
        let fm = FileManager.default
        var out: [String: (String, Int, Int)] = [:]
        for name in ((try? fm.contentsOfDirectory(atPath: target)) ?? []).sorted() where !name.hasPrefix(".") {
            let dir = target + "/" + name
            guard let data = fm.contents(atPath: dir + "/" + ExportManifest.fileName),
                  let m = try? JSONDecoder().decode(ExportManifest.self, from: data),
                  m.format == options.format.rawValue, out[m.sessionID] == nil else { continue }
            if (try? Exporter.verifyExisting(m, in: dir, options: options)) != nil { out[m.sessionID] = (name, m.frameCount, m.eventCount) }
        }
        return out
    }

    /// Hidden `.session_….partial-…` directories are exports cut short by a pulled stick (the
    /// Exporter could not remove them then): removed, so a stick never fills with debris. Only
    /// those the Exporter can recognize as its own (see `Exporter.removeStalePartials`).
    func removeStalePartials(in target: String) {
        Exporter.removeStalePartials(in: target)
    }

    private func mount(_ node: String, _ kind: FilesystemKind) throws(KioskError) {
        do { try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true) }
        catch { throw KioskError("cannot create the mount point \(mountPoint): \(error.localizedDescription)") }
        // A stick pulled earlier without an unmount may still be attached here.
        _ = Syscalls.unmount(mountPoint, flags: Int32(MNT_DETACH))
        let flags = UInt(MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME)
        // vfat: `flush` writes back early, so little is in flight when a stick is pulled.
        let data = kind == .vfat ? "flush" : nil
        switch Syscalls.mount(source: node, target: mountPoint, type: kind.mountType!, flags: flags, data: data) {
        case .success: return
        case .failure(let e) where e == .readOnlyFileSystem || e == .permissionDenied:
            throw KioskError("the stick \(node) is read-only (write-protect switch?); nothing was written", cause: e)
        case .failure(let e) where e == .noDevice:
            throw KioskError("the kernel has no \(kind.mountType!) driver (modprobe \(kind.mountType!))", cause: e)
        case .failure(let e):
            throw KioskError("cannot mount \(node) (\(kind)) on \(mountPoint); the filesystem may be damaged: check it on a computer", cause: e)
        }
    }
}
