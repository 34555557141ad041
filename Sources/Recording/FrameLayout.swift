/// The fixed binary layout of one frame record in `frames.log`, for one vertex mode.
///
/// Every record of a session has the same size, so a record's offset is `header + i * recordSize`
/// and recovery can tell a torn tail from damage in the middle. Little-endian throughout.
///
///     record   = magic u32 "FKFR" | crc32c u32 (of payload) | payload
///     payload  = seq u64 | monotonicNs i64 | frameIndex i64 | droppedBefore u64 | flags u32
///              | blendShapes f32×52 | headPose f32×3 | lookAt f32×3 | light f32×2 | distance f32
///              | actionUnits f32×14 | emotions f32×7 | landmarks (f16|f32)×K×3
///              [ | faceId i32 ]   multi-face sessions only (`hasFaceIDs`, frame log version 3)
///
/// A multi-face session stores one record per (frame, face), in the order the tracker reports
/// the faces, and one record with face ID -1 for a frame without a face; a single-face session
/// stores one record per frame, without the face ID, exactly as before multi-face sessions.
public struct FrameLayout: Sendable, Equatable {
    package static let recordMagic: UInt32 = 0x5246_4B46 // "FKFR" little-endian
    package static let framingSize = 8
    static let fixedPayload = 364
    static let oBlend = 36, oHead = 244, oLookAt = 256, oLight = 268, oDistance = 276
    static let oAU = 280, oEmotion = 336, oLandmarks = 364

    package static let flagTracked: UInt32 = 1, flagImage: UInt32 = 2
    /// Bits 2-3: `DistanceSource` (0 in logs written before depth existed: read as none).
    static let distanceSourceShift: UInt32 = 2, distanceSourceMask: UInt32 = 3 << 2

    package let vertexMode: VertexMode
    /// Mesh index of each stored vertex.
    package let vertexIndices: [Int]
    package let payloadSize: Int
    package var recordSize: Int { payloadSize + Self.framingSize }
    /// Whether each record ends with the face's ID (sessions with `maxTrackedFaces` > 1).
    package let hasFaceIDs: Bool
    /// Payload offset of the face ID, when stored.
    let oFaceID: Int

    package init(vertexMode: VertexMode, faceIDs: Bool = false) {
        self.vertexMode = vertexMode
        vertexIndices = vertexMode.indices
        hasFaceIDs = faceIDs
        oFaceID = Self.fixedPayload + vertexMode.byteCount
        payloadSize = oFaceID + (faceIDs ? 4 : 0)
    }

    /// The layout of a session's frame log, from its stored configuration.
    package init(config: SessionConfig) {
        self.init(vertexMode: config.vertices, faceIDs: config.storesFaceIDs)
    }

    /// Serializes `r` into `dst` (payload only, `payloadSize` bytes). Allocates nothing.
    @inline(__always)
    package func encode(_ r: FrameRecord, seq: UInt64, droppedBefore: UInt64, hasImage: Bool,
                       into dst: UnsafeMutableRawPointer) {
        dst.storeBytes(of: seq.littleEndian, toByteOffset: 0, as: UInt64.self)
        dst.storeBytes(of: r.monotonicNs.littleEndian, toByteOffset: 8, as: Int64.self)
        dst.storeBytes(of: r.frameIndex.littleEndian, toByteOffset: 16, as: Int64.self)
        dst.storeBytes(of: droppedBefore.littleEndian, toByteOffset: 24, as: UInt64.self)
        let flags = (r.isFaceTracked ? Self.flagTracked : 0) | (hasImage ? Self.flagImage : 0)
            | UInt32(r.distanceSource.rawValue) << Self.distanceSourceShift
        dst.storeBytes(of: flags.littleEndian, toByteOffset: 32, as: UInt32.self)
        @inline(__always) func put(_ v: Float, _ off: Int) {
            dst.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: off, as: UInt32.self)
        }
        @inline(__always) func putArray(_ a: [Float], _ count: Int, _ off: Int) {
            a.withUnsafeBufferPointer { b in
                for i in 0..<count { put(i < b.count ? b[i] : .nan, off + 4 * i) }
            }
        }
        putArray(r.blendShapes, FaceSchema.blendShapeCount, Self.oBlend)
        put(r.headPitch, Self.oHead); put(r.headYaw, Self.oHead + 4); put(r.headRoll, Self.oHead + 8)
        put(r.lookAtX, Self.oLookAt); put(r.lookAtY, Self.oLookAt + 4); put(r.lookAtZ, Self.oLookAt + 8)
        put(r.ambientIntensity, Self.oLight); put(r.ambientColorTemperature, Self.oLight + 4)
        put(r.distanceToScreen, Self.oDistance)
        putArray(r.actionUnits, FaceSchema.actionUnitCount, Self.oAU)
        putArray(r.emotions, FaceSchema.emotionCount, Self.oEmotion)
        if hasFaceIDs { dst.storeBytes(of: r.faceId.littleEndian, toByteOffset: oFaceID, as: Int32.self) }
        guard let precision = vertexMode.precision else { return }
        r.landmarks.withUnsafeBufferPointer { lm in
            vertexIndices.withUnsafeBufferPointer { ix in
                var off = Self.oLandmarks
                for k in 0..<ix.count {
                    let base = ix[k] * 3
                    for c in 0..<3 {
                        let v: Float = base + c < lm.count ? lm[base + c] : .nan
                        if precision == .float16 {
                            dst.storeBytes(of: Float16(v).bitPattern.littleEndian, toByteOffset: off, as: UInt16.self)
                            off += 2
                        } else {
                            put(v, off); off += 4
                        }
                    }
                }
            }
        }
    }
}

/// Read access to one stored record's payload (points into a read buffer; valid while it is).
package struct FrameView {
    package let payload: UnsafeRawPointer
    package let layout: FrameLayout

    package init(payload: UnsafeRawPointer, layout: FrameLayout) { self.payload = payload; self.layout = layout }

    @inline(__always) func f32(_ off: Int) -> Float {
        Float(bitPattern: UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: off, as: UInt32.self)))
    }
    package var seq: UInt64 { UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) }
    package var monotonicNs: Int64 { Int64(littleEndian: payload.loadUnaligned(fromByteOffset: 8, as: Int64.self)) }
    package var frameIndex: Int64 { Int64(littleEndian: payload.loadUnaligned(fromByteOffset: 16, as: Int64.self)) }
    /// The face's session-stable ID in a multi-face session (-1: no face in this frame); 0 for a
    /// tracked frame of a single-face session, whose records carry no ID.
    package var faceId: Int32 {
        if layout.hasFaceIDs { return Int32(littleEndian: payload.loadUnaligned(fromByteOffset: layout.oFaceID, as: Int32.self)) }
        return isFaceTracked ? 0 : -1
    }
    package var droppedBefore: UInt64 { UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) }
    var flags: UInt32 { UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: 32, as: UInt32.self)) }
    package var isFaceTracked: Bool { flags & FrameLayout.flagTracked != 0 }
    package var hasImage: Bool { flags & FrameLayout.flagImage != 0 }
    package var distanceSource: DistanceSource {
        DistanceSource(rawValue: UInt8((flags & FrameLayout.distanceSourceMask) >> FrameLayout.distanceSourceShift)) ?? .none
    }

    @inline(__always) package func blendShape(_ i: Int) -> Float { f32(FrameLayout.oBlend + 4 * i) }

    /// The `FaceSchema.metadataColumns` values of this frame, in that order.
    @inline(__always) package func metadata(_ column: Int) -> Float {
        switch column {
        case 0: return isFaceTracked ? 1 : 0
        case 1: return Float(droppedBefore)
        case 2...4: return f32(FrameLayout.oLookAt + 4 * (column - 2))
        case 5...6: return f32(FrameLayout.oLight + 4 * (column - 5))
        case 7: return f32(FrameLayout.oDistance)
        case 8..<15: return f32(FrameLayout.oEmotion + 4 * (column - 8))
        case 15..<18: return f32(FrameLayout.oHead + 4 * (column - 15))
        default: return f32(FrameLayout.oAU + 4 * (column - 18))
        }
    }

    /// Stored landmark component `i` (vertex `i / 3`, axis `i % 3`), widened to Float.
    @inline(__always) package func landmark(_ i: Int) -> Float {
        if layout.vertexMode.precision == .float16 {
            let bits = UInt16(littleEndian: payload.loadUnaligned(fromByteOffset: FrameLayout.oLandmarks + 2 * i, as: UInt16.self))
            return Float(Float16(bitPattern: bits))
        }
        return f32(FrameLayout.oLandmarks + 4 * i)
    }

    /// Raw stored landmark bytes (float16 or float32, little-endian), for copying at full fidelity.
    package var landmarkBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: payload + FrameLayout.oLandmarks, count: layout.vertexMode.byteCount)
    }

    /// Rebuilds a `FrameRecord` (landmarks scattered back to mesh positions, the rest NaN).
    package func record() -> FrameRecord {
        var r = FrameRecord()
        r.monotonicNs = monotonicNs; r.frameIndex = frameIndex; r.isFaceTracked = isFaceTracked
        if layout.hasFaceIDs { r.faceId = faceId }
        for i in 0..<FaceSchema.blendShapeCount { r.blendShapes[i] = blendShape(i) }
        r.headPitch = f32(FrameLayout.oHead); r.headYaw = f32(FrameLayout.oHead + 4); r.headRoll = f32(FrameLayout.oHead + 8)
        r.lookAtX = f32(FrameLayout.oLookAt); r.lookAtY = f32(FrameLayout.oLookAt + 4); r.lookAtZ = f32(FrameLayout.oLookAt + 8)
        r.ambientIntensity = f32(FrameLayout.oLight); r.ambientColorTemperature = f32(FrameLayout.oLight + 4)
        r.distanceToScreen = f32(FrameLayout.oDistance)
        r.distanceSource = distanceSource
        for i in 0..<FaceSchema.actionUnitCount { r.actionUnits[i] = f32(FrameLayout.oAU + 4 * i) }
        for i in 0..<FaceSchema.emotionCount { r.emotions[i] = f32(FrameLayout.oEmotion + 4 * i) }
        for (k, m) in layout.vertexIndices.enumerated() {
            for c in 0..<3 { r.landmarks[m * 3 + c] = landmark(k * 3 + c) }
        }
        return r
    }
}
