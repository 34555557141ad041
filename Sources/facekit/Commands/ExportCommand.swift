import Export
import Foundation
import Recording

/// `facekit export`: writes a session (or all) in the seed's layout to a folder, e.g. a USB stick.
struct ExportCommand: Command {
    static let about = CommandAbout(["export"], "facekit export <session-id>|--all --to DIR --format csv|jsonl|hdf5|openface|pyfeat|bids [--images] [--store DIR]",
                                    "Export sessions (seed layout, manifest with SHA-256; temp name, fsync, rename); bids: --to is a BIDS dataset that grows.")
    let args: ArgumentScanner
    init(arguments: [String]) throws {
        args = try ArgumentScanner(arguments, valueOptions: ["store", "to", "format"], flagOptions: ["all", "images"])
        if args.flag("all") == !args.positionals.isEmpty {
            throw UsageError("name one session ID or --all")
        }
        guard args.positionals.count <= 1 else { throw UsageError("name one session ID (or --all)") }
        _ = try args.required("to")
        guard let f = args.value("format"), ExportFormat(rawValue: f) != nil else {
            throw UsageError("--format must be \(ExportFormat.spelledOut)")
        }
    }

    func run() throws -> Int32 {
        let store = try openStore(args, create: false)
        let exporter = Exporter(store: store)
        // Progress on stderr, a line per tenth of the frames: a long session's export is visibly alive.
        let options = ExportOptions(format: ExportFormat(rawValue: args.value("format")!)!, includeImages: args.flag("images"),
                                    progress: { done, total in printError("export: \(done)/\(total) records (\(total > 0 ? done * 100 / total : 100)%)") })
        let target = args.value("to")!
        // Exports cut short earlier (killed, unplugged) left hidden staging directories: say so.
        for dir in Exporter.removeStalePartials(in: target) { printError("facekit: removed an unfinished export: \(dir)") }
        if args.flag("all") {
            var rc: Int32 = 0
            let results = try exporter.exportAll(to: target, options: options)
            if results.isEmpty { print("no sessions in \(store.root)") }
            for (id, r) in results {
                switch r {
                case .success(let e):
                    print("\(id) -> \(e.directory) (\(e.frameCount) frames, \(e.files.count) files)")
                    reportSkipped(id, e)
                case .failure(let e): printError("facekit: \(id): \(e)"); rc = 1
                }
            }
            return rc
        }
        let e = try exporter.export(sessionID: args.positionals[0], to: target, options: options)
        print("\(args.positionals[0]) -> \(e.directory) (\(e.frameCount) frames, \(e.eventCount) events, \(e.files.count) files)")
        reportSkipped(args.positionals[0], e)
        return 0
    }

    /// Files left out of an export are named on stderr: the export itself succeeded.
    private func reportSkipped(_ id: String, _ e: ExportResult) {
        for s in e.skipped { printError("facekit: \(id): not exported: \(s)") }
    }
}
