import Testing
@testable import Export

@Test func moduleLinks() { #expect(ExportModule.name == "Export") }
