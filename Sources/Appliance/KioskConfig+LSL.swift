import LabStreaming

extension KioskConfig {
    /// `lsl`: the Lab Streaming Layer streams of the kiosk. Off unless `enabled`: LSL needs a
    /// network, which the kiosk's unit denies by default (PrivateNetwork=yes); enabling it also
    /// needs the unit drop-in (rootfs-overlay/README.md).
    package struct LSL: Sendable, Equatable {
        package var enabled = false
        /// liblsl's file; nil searches the loader's path for liblsl.so.2.
        package var library: String? = nil
        package var name = "facekit"
        package var type = "Face"
        package var markersName = "facekit-markers"
        /// A markers stream on the network (the stimulus computer) whose markers become session events.
        package var markersIn: MarkerInlet.Selector? = nil

        /// The LabSync options for this config's camera.
        package func options(camera: Camera) -> LabSync.Options {
            var o = LabSync.Options()
            o.library = library
            o.faceName = name; o.faceType = type; o.markersName = markersName
            o.camera = camera.device
            o.nominalRate = camera.fps
            o.inlet = markersIn
            return o
        }
    }
}

extension ObjectReader {
    /// Parses `lsl { enabled, library, name, type, markersName, markersIn { name, type, sourceID } }`.
    func lsl() throws(ConfigError) -> KioskConfig.LSL {
        var l = KioskConfig.LSL()
        l.enabled = try bool("enabled", l.enabled)
        if let s = try optionalString("library") { l.library = try string("library", s, absolutePath: true) }
        l.name = try string("name", l.name)
        l.type = try string("type", l.type)
        l.markersName = try string("markersName", l.markersName)
        if let m = try object("markersIn") {
            let sel = MarkerInlet.Selector(name: try m.optionalString("name"), type: try m.optionalString("type"),
                                           sourceID: try m.optionalString("sourceID"))
            do { _ = try sel.predicate() } catch {
                throw ConfigError(file: m.file, keyPath: m.path, problem: error.message.replacingOccurrences(of: "LSL marker inlet: ", with: ""))
            }
            try m.finish()
            l.markersIn = sel
        }
        try finish()
        return l
    }
}
