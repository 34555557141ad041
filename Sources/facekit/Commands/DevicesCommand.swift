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
        print("Cameras:")
        if report.cameras.isEmpty { print("  (none)") }
        for c in report.cameras {
            print("  \(c.path)  \(c.card)  [\(c.driver), \(c.busInfo)]")
            for f in c.formats {
                let sizes = f.sizes.map { s in
                    "\(s.width)x\(s.height)" + (s.fps.isEmpty ? "" : "@" + s.fps.map { fmt($0) }.joined(separator: "/"))
                }
                let joiner = f.sizeKind == "stepwise" ? " .. " : ", "
                print("    \(f.fourcc.padding(toLength: 4, withPad: " ", startingAt: 0))  \(f.description): \(sizes.joined(separator: joiner))")
            }
            if !c.controls.isEmpty {
                let ctl = c.controls.map { "\($0.name)=\($0.value.map(String.init) ?? "?") [\($0.minimum)..\($0.maximum)]" }
                print("    controls: \(ctl.joined(separator: ", "))")
            }
        }
        print("GPIO chips:")
        if report.gpioChips.isEmpty { print("  (none)") }
        for g in report.gpioChips {
            print("  \(g.path)  \(g.label)  (\(g.name), \(g.lines.count) lines)")
            for l in g.lines where !l.name.isEmpty || !l.consumer.isEmpty {
                let consumer = l.consumer.isEmpty ? "" : "  used by \(l.consumer)"
                print("    line \(l.offset): \(l.name.isEmpty ? "-" : l.name) \(l.direction)\(l.activeLow ? " active-low" : "")\(consumer)")
            }
        }
        print("USB sticks:")
        if report.usbSticks.isEmpty { print("  (none)") }
        for b in report.usbSticks {
            let size = String(format: "%.1f GB", Double(b.sizeBytes) / 1e9)
            print("  \(b.path)  \(b.vendor) \(b.model)  \(size)\(b.usb ? "  usb" : "")\(b.removable ? "  removable" : "")")
            for p in b.partitions {
                print("    \(p.path)  \(String(format: "%.1f GB", Double(p.sizeBytes) / 1e9))\(p.mountpoint.map { "  mounted on \($0)" } ?? "")")
            }
        }
        for p in problems { printError("facekit: \(p)") }
        return 0
    }

    private func fmt(_ fps: Double) -> String {
        fps.rounded() == fps ? String(Int(fps)) : String(format: "%.2f", fps)
    }
}
