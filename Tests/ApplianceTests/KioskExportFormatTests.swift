import Foundation
import Testing
@testable import Appliance

@Suite struct KioskExportFormatTests {
    @Test(arguments: ["csv", "jsonl", "hdf5", "openface", "pyfeat", "bids"])
    func everyExportFormatIsAcceptedInTheConfig(_ format: String) throws {
        let c = try KioskConfig.parse(Data("{\"export\": {\"format\": \"\(format)\"}}".utf8))
        #expect(c.export.format == format)
    }
}
