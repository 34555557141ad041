/// What is on a stick's partition, read from its first sectors by facekit itself (no blkid): the
/// kiosk mounts only FAT (vfat) and exFAT, and never formats anything.
package enum FilesystemKind: Equatable, Sendable, CustomStringConvertible {
    case vfat, exfat
    /// Something else, named when recognised (ext4, NTFS, …): refused.
    case other(String)

    /// The type name mount(2) takes.
    package var mountType: String? {
        switch self { case .vfat: return "vfat"; case .exfat: return "exfat"; case .other: return nil }
    }

    package var description: String {
        switch self { case .vfat: return "FAT"; case .exfat: return "exFAT"; case .other(let s): return s }
    }
}

package enum FilesystemProbe {
    /// Bytes `identify` wants: the boot sector plus the ext superblock's magic (at 1080).
    package static let probeSize = 2048

    /// Identifies the filesystem from the first `probeSize` bytes of a block device.
    package static func identify(_ b: [UInt8]) -> FilesystemKind {
        func ascii(_ at: Int, _ n: Int) -> String {
            guard b.count >= at + n else { return "" }
            return String(decoding: b[at ..< at + n], as: UTF8.self)
        }
        func le16(_ at: Int) -> Int { b.count >= at + 2 ? Int(b[at]) | Int(b[at + 1]) << 8 : 0 }
        guard b.count >= 512 else { return .other("unreadable (short read)") }
        if ascii(3, 8) == "EXFAT   " {
            // exFAT: BytesPerSectorShift 9…12, the signature, and the must-be-zero BPB area.
            let shift = Int(b[108])
            if (9...12).contains(shift) && b[510] == 0x55 && b[511] == 0xAA && b[11 ..< 64].allSatisfy({ $0 == 0 }) { return .exfat }
            return .other("damaged exFAT")
        }
        if ascii(3, 8) == "NTFS    " { return .other("NTFS") }
        if b.count >= 1082 && le16(1080) == 0xEF53 { return .other("ext2/3/4") }
        // FAT12/16/32: a plausible BIOS parameter block, then the type string where its version keeps it.
        let bytesPerSector = le16(11)
        let sectorsPerCluster = Int(b[13])
        let reserved = le16(14)
        let fats = Int(b[16])
        let validBPB = [512, 1024, 2048, 4096].contains(bytesPerSector) && sectorsPerCluster > 0
            && sectorsPerCluster & (sectorsPerCluster - 1) == 0 && reserved > 0 && (1...2).contains(fats)
            && b[510] == 0x55 && b[511] == 0xAA
        if validBPB && (ascii(82, 5) == "FAT32" || ascii(54, 4) == "FAT1" || ascii(54, 3) == "FAT") { return .vfat }
        if b[510] == 0x55 && b[511] == 0xAA && !validBPB && b[446 ..< 510].contains(where: { $0 != 0 }) {
            return .other("a partition table without a filesystem (whole disk)")
        }
        if b.prefix(probeSize).allSatisfy({ $0 == 0 }) { return .other("blank (unformatted)") }
        return .other("an unknown filesystem")
    }
}
