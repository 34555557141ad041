import Appliance
import Foundation

/// `facekit run [--config FILE]`: the kiosk (Appliance/Kiosk.swift builds it, KioskDaemon runs it), normally
/// started by systemd (rootfs-overlay/etc/systemd/system/facekit.service).
struct RunCommand: Command {
    static let about = CommandAbout(["run"], "facekit run [--config FILE] [--check-config]",
                                    "The kiosk daemon: GPIO buttons and TTL markers, live recording, USB-stick export, sd_notify.")

    var configPath: String
    var checkOnly: Bool

    init(arguments: [String]) throws {
        let a = try ArgumentScanner(arguments, valueOptions: ["config"], flagOptions: ["check-config"])
        try a.rejectPositionals()
        configPath = a.value("config") ?? ProcessInfo.processInfo.environment["FACEKIT_CONFIG"] ?? KioskConfig.defaultPath
        checkOnly = a.flag("check-config")
    }

    func run() throws -> Int32 {
        // Before any thread exists, so every thread inherits the mask and sigwait sees the signals.
        TerminationSignals.block()
        let log = KioskLog()
        let config: KioskConfig
        do { config = try KioskConfig.load(path: configPath) } catch { throw CommandFailure(error.description) }
        if checkOnly {
            // The LSL note is what facekit's systemd generator reads to give the unit its network.
            print("\(configPath): valid (\(config.inputs.count) inputs, \(config.outputs.count) outputs)"
                  + (config.lsl.enabled ? "; LSL on: facekit.service gets the network through its lsl.conf drop-in" : ""))
            return 0
        }
        let kiosk: Kiosk
        do { kiosk = try Kiosk(config: config, configPath: configPath, log: log) } catch { throw CommandFailure(error.description) }
        return kiosk.run()
    }
}
