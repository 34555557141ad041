import Testing
@testable import Recording

@Test func moduleLinks() { #expect(RecordingModule.name == "Recording") }
