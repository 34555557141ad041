extension KioskConfig {
    /// `jsonStream`: the live per-frame face JSON (the seed's face-capture format) to a FIFO.
    public struct JSONStream: Sendable, Equatable {
        /// An existing FIFO (mkfifo -m 0660, group of the reader); facekit only writes to it.
        public var fifo: String
    }
}

extension ObjectReader {
    /// Parses `jsonStream { fifo }`.
    func jsonStream() throws(ConfigError) -> KioskConfig.JSONStream {
        guard let p = try optionalString("fifo") else { throw error("fifo", "missing (required): the FIFO to write to, e.g. /run/facekit-face.fifo") }
        let s = KioskConfig.JSONStream(fifo: try string("fifo", p, absolutePath: true))
        try finish()
        return s
    }
}
