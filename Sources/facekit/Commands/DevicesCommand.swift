import Capture
import Foundation
import Appliance
import GPIO
#if canImport(Glibc)
import Glibc
#endif

/// `facekit devices`: what the appliance can see — cameras with formats, sizes and rates; GPIO
/// chips with their lines; block devices that look like USB sticks.
struct DevicesCommand: Command {
    static let about = CommandAbout(["devices"], "facekit devices [--json]",
                                    "List cameras (formats, sizes, rates, controls), GPIO chips and lines, USB sticks.")

    let json: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: [], flagOptions: ["json"])
        try a.rejectPositionals()
        json = a.flag("json")
    }

    struct Report: Codable {
        var cameras: [CameraInfo], gpioChips: [GPIOChipListing], usbSticks: [BlockDeviceInfo]
        var problems: [String]
    }

    func run() throws -> Int32 {
        var problems: [String] = []
        let report = Report(cameras: DeviceDiscovery.cameras(problems: &problems),
                            gpioChips: GPIOChipListing.all(problems: &problems),
                            usbSticks: BlockDeviceInfo.usbSticks(), problems: problems)
        if json {
            try printJSON(report)
            return 0
        }
        section("Cameras:", report.cameras.map(\.reportLines))
        section("GPIO chips:", report.gpioChips.map(\.reportLines))
        section("USB sticks:", report.usbSticks.map(\.reportLines))
        for p in problems { printError("facekit: \(p)") }
        return 0
    }

    private func section(_ title: String, _ devices: [[String]]) {
        print(title)
        if devices.isEmpty { print("  (none)") }
        for lines in devices { lines.forEach { print($0) } }
    }
}
