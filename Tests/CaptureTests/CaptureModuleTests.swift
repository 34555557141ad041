import Testing
@testable import Capture

@Test func moduleLinks() { #expect(CaptureModule.name == "Capture") }
