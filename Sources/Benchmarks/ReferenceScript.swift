import Foundation

/// A measuring script of scripts/reference run by the verification venv's Python (made by
/// scripts/setup): the reference a benchmark times facekit against.
struct ReferenceScript {
    static let python = ".venv/bin/python"
    /// The script, relative to the checkout, as messages name it.
    let script: String
    /// The interpreter and the script as this process reaches them.
    let pythonPath: String, scriptPath: String

    /// Finds `script` in the checkout at `root`; `what` names the reference and `skip` the option
    /// that leaves it out, for the message when the venv or the script is missing.
    init(_ script: String, root: String, what: String, skip: String) throws {
        self.script = script
        pythonPath = Self.path(Self.python, root: root); scriptPath = Self.path(script, root: root)
        guard FileManager.default.isExecutableFile(atPath: pythonPath), FileManager.default.fileExists(atPath: scriptPath) else {
            throw BenchmarkError(.reference, "\(what) reference not found (\(Self.python), \(script)); run scripts/setup from the repository root, or pass \(skip)")
        }
    }

    /// `relative` in the checkout at `root` ("." leaves it as it is).
    static func path(_ relative: String, root: String) -> String { root == "." ? relative : "\(root)/\(relative)" }

    /// The command line a person runs to see a failure for themselves.
    func command(_ arguments: [String]) -> String { ([Self.python, script] + arguments).joined(separator: " ") }
}
