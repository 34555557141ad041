import Foundation
import Testing
@testable import Appliance

/// Two sticks in at once: only the removal of the stick being exported to cancels its export.
extension KioskDaemonTests {
    /// The job for "sda" runs until cancelled or for about a second; any other stick's is instant.
    static func slowOnSda(_ d: String, _ cancelled: () -> Bool) throws(KioskError) -> StickExportReport {
        if d == "sda" {
            for _ in 0..<100 {
                if cancelled() { throw KioskError("the stick /dev/sda1 was removed during the export") }
                usleep(10_000)
            }
            return StickExportReport(device: "/dev/sda1", filesystem: .vfat, exported: [("S1", "session_S1", 5, 0)], seconds: 1)
        }
        return StickExportReport(device: "/dev/\(d)1", filesystem: .vfat, exported: [], seconds: 0)
    }

    @Test func aSecondStickPulledDuringAnExportLeavesItRunning() throws {
        let rig = try Rig(exportResult: { d, c throws(KioskError) in try Self.slowOnSda(d, c) })
        rig.exportStarted(on: "sda")
        rig.insert("sdb")
        rig.pull("sdb")
        rig.waitFor("export done") { rig.log("export.done").count >= 1 && rig.daemon.state == .ready }
        #expect(rig.log("export.failed").isEmpty)
        #expect(rig.log("export.done").first?.contains("sessions=1") == true)
        rig.waitFor("safe") { rig.outputs.lit == [.ready, .safeToRemove] }
        rig.pull("sda")
        rig.waitFor("no stick") { rig.outputs.lit == [.ready] }
        rig.finish()
    }

    @Test func theExportedStickPulledWhileASecondIsInExportsToTheSecond() throws {
        let rig = try Rig(exportResult: { d, c throws(KioskError) in try Self.slowOnSda(d, c) })
        rig.exportStarted(on: "sda")
        rig.insert("sdb")
        rig.pull("sda")
        rig.waitFor("second export done") { rig.log("export.done").count == 1 }
        #expect(rig.log("export.failed").count == 1, "the pulled stick's export was cancelled")
        #expect(rig.exports.withLock { $0 } == ["sda", "sdb"])
        rig.waitFor("safe") { rig.outputs.lit == [.ready, .safeToRemove] }
        rig.finish()
    }
}
