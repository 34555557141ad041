import Foundation
import LinuxSystem
import Testing
@testable import Recording
import FacekitTestSupport

/// The store's record of a session reaching a stick (`markExported`, `isExported`).
@Suite struct ExportMarkerTests {
    @Test func marksASessionExportedAtomicallyAndListsItAsSuch() throws {
        let dir = TempDir(); defer { dir.cleanup() }
        let store = try SessionStore(root: dir.path)
        let rec = try recordSynthetic(store, frames: 10)
        #expect(!store.isExported(rec.sessionID))
        try store.markExported(rec.sessionID, .init(exportedAt: "2026-12-02T09:00:00Z", directory: "facekit/session_P001",
                                                   format: "hdf5", frames: 10, events: 2))
        #expect(store.isExported(rec.sessionID))
        let text = try String(contentsOfFile: dir.path + "/" + rec.sessionID + "/exported.json", encoding: .utf8)
        #expect(text == #"{"directory":"facekit\/session_P001","events":2,"exportedAt":"2026-12-02T09:00:00Z","format":"hdf5","frames":10}"#)
        // The marker is a file the store made: the session still verifies and can be deleted.
        #expect(try store.list().count == 1)
        try store.delete(rec.sessionID)
    }

    @Test func refusesIDsThatAreNotSessions() {
        let dir = TempDir(); defer { dir.cleanup() }
        guard let store = try? SessionStore(root: dir.path) else { Issue.record("no store"); return }
        #expect(!store.isExported("../etc") && !store.isExported("nope"))
        #expect(throws: RecordingError.self) {
            try store.markExported("../escape", .init(exportedAt: "", directory: "", format: "csv", frames: 0, events: 0))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/../escape"))
    }
}
