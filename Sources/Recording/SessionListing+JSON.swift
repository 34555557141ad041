import Foundation

extension SessionListing {
    /// The object `facekit sessions list --json` prints for this entry (JSONSerialization types).
    package var jsonRow: [String: Any] {
        switch result {
        case .success(let s):
            var row: [String: Any] = ["sessionID": s.sessionID, "participant": s.participant, "state": s.state.rawValue,
                                      "frameCount": s.frameCount, "storageBytes": s.storageBytes,
                                      "startedAt": s.metadata.startedAt, "droppedFrames": s.metadata.droppedFrames]
            row["durationSeconds"] = s.durationSeconds ?? NSNull()
            if let e = s.metadata.error { row["error"] = e }
            if let r = s.metadata.recovery { row["recovery"] = r }
            if s.damagedRecords > 0 { row["state"] = "damaged"; row["damaged"] = s.damagedRecords }
            return row
        case .failure(let e):
            return ["sessionID": sessionID, "state": Self.failedState(e), "error": e.description]
        }
    }

    /// The entry did not open, or has damaged records: `sessions list` exits 1 for it.
    package var isFaulty: Bool {
        switch result {
        case .failure: true
        case .success(let s): s.damagedRecords > 0
        }
    }
}
