import Testing
@testable import Appliance
