import CLSL

/// An LSL stream description (lsl_streaminfo) being built for an outlet: the header a recorder
/// such as LabRecorder stores with the stream.
package final class StreamInfo {
    package struct Channel: Sendable, Equatable {
        package var label: String, unit: String, type: String
        package init(label: String, unit: String, type: String) { self.label = label; self.unit = unit; self.type = type }
    }

    let handle: clsl_streaminfo

    /// `rate` 0 means irregular (LSL_IRREGULAR_RATE). The library must be loaded.
    init(name: String, type: String, channelCount: Int, rate: Double, format: Int32, sourceID: String) throws(LSLError) {
        guard let h = clsl_create_streaminfo(name, type, Int32(channelCount), rate, format, sourceID) else {
            throw LSLError(.stream, "liblsl could not describe the stream '\(name)' (\(channelCount) channels)")
        }
        handle = h
    }

    deinit { clsl_destroy_streaminfo(handle) }

    /// Writes `desc/channels/channel/{label,unit,type}` for each channel (the XDF meta-data
    /// convention) and `desc/synchronization/can_drop_samples`.
    func describe(channels: [Channel], canDropSamples: Bool, extra: [(String, String)] = []) {
        let desc = clsl_get_desc(handle)
        let list = clsl_append_child(desc, "channels")
        for c in channels {
            let ch = clsl_append_child(list, "channel")
            clsl_append_child_value(ch, "label", c.label)
            clsl_append_child_value(ch, "unit", c.unit)
            clsl_append_child_value(ch, "type", c.type)
        }
        let sync = clsl_append_child(desc, "synchronization")
        clsl_append_child_value(sync, "can_drop_samples", canDropSamples ? "true" : "false")
        for (k, v) in extra { clsl_append_child_value(desc, k, v) }
    }

    /// The outlet copies the description; this one may be released afterwards.
    func makeOutlet(maxBufferedSeconds: Int32) throws(LSLError) -> clsl_outlet {
        guard let o = clsl_create_outlet(handle, 0, maxBufferedSeconds) else {
            throw LSLError(.stream, "liblsl could not open an outlet (no network interface? LSL needs one, e.g. lo up)")
        }
        return o
    }
}
