import FacekitTestSupport
import Foundation
import Synchronization
import Testing
@testable import Recording

/// Sessions created in the same second differ only in their random suffix; `facekit process
/// --jobs N` creates them from several threads at once. A clash draws another suffix.
struct SessionIDClashTests {
    @Test func aTakenIDDrawsAnotherSuffix() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let draws = Mutex<[UInt16]>([7, 7, 7, 9])
        let store = try SessionStore(root: dir.path, idSuffix: { draws.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] } })
        let first = try store.create(participant: "P001"), second = try store.create(participant: "P001")
        let ids = [try first.stop().sessionID, try second.stop().sessionID]
        #expect(ids[0].hasSuffix("-0007"))
        // Within the same second 0007 is taken twice over; in the next one it is free again.
        #expect(ids[1].hasSuffix("-0009") || (ids[1].hasSuffix("-0007") && ids[1] != ids[0]))
        let listed = try store.list()
        #expect(listed.count == 2)
    }

    @Test func everyIDTakenIsAnErrorNotAMerge() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path, idSuffix: { 1 })
        let first = try store.create(participant: "P001")
        defer { _ = try? first.stop() }
        let id = first.directory.split(separator: "/").last.map(String.init) ?? ""
        do {
            let again = try store.create(participant: "P001")
            // The clock moved on to the next second: a different ID, which is fine.
            #expect(again.directory != first.directory)
            _ = try? again.stop()
        } catch {
            #expect(error.message.contains("no fresh session ID"), "\(error)")
        }
        #expect(FileManager.default.fileExists(atPath: dir.path + "/" + id))
    }

    @Test func manyThreadsCreatingAtOnceAllGetTheirOwnSession() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        // 32 sessions over 128 suffixes: without redrawing, a clash is all but certain.
        let store = try SessionStore(root: dir.path, idSuffix: { UInt16.random(in: 0 ..< 128) })
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 32) { _ in
            do { _ = try store.create(participant: "P001").stop() }
            catch { failures.withLock { $0.append("\(error)") } }
        }
        let failed = failures.withLock { $0 }
        #expect(failed == [])
        let listed = try store.list()
        #expect(listed.count == 32)
    }
}
