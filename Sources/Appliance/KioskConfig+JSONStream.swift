extension KioskConfig {
    /// `jsonStream`: the live per-frame face JSON (the seed's face-capture format) to a FIFO or
    /// to the clients of a UNIX socket facekit creates.
    package enum JSONStream: Sendable, Equatable {
        /// An existing FIFO (mkfifo -m 0660, group of the reader); facekit only writes to it.
        case fifo(String)
        /// A socket facekit creates, mode 0660, owned by `group` when given.
        case socket(String, group: String?)
    }
}

extension ObjectReader {
    /// Parses `jsonStream { fifo }` or `jsonStream { socket, group }`.
    func jsonStream() throws(ConfigError) -> KioskConfig.JSONStream {
        let fifo = try optionalString("fifo"), socket = try optionalString("socket"), group = try optionalString("group")
        let s: KioskConfig.JSONStream
        switch (fifo, socket) {
        case (let f?, nil):
            guard group == nil else { throw error("group", "only for a socket (a FIFO's group is set where it is created)") }
            s = .fifo(try string("fifo", f, absolutePath: true))
        case (nil, let p?):
            if let g = group, g.isEmpty || g.utf8.count > 32 || g.contains("/") { throw error("group", "expected a group name, got \"\(g)\"") }
            s = .socket(try string("socket", p, absolutePath: true), group: group)
        case (nil, nil): throw error("fifo", "missing (required): a FIFO (fifo) or a socket (socket) to write to, e.g. /run/facekit-face.fifo")
        case (_?, _?): throw error("socket", "give a FIFO (fifo) or a socket (socket), not both")
        }
        try finish()
        return s
    }
}
