import Testing
@testable import FaceCore
@Test func version() { #expect(FaceCoreInfo.version == 1) }
