import LinuxSystem

/// Why a benchmark could not run or finish; the message names the file and the remedy.
package enum BenchmarkFailure: Sendable, Equatable {
    /// A model the engines cannot take.
    case model
    /// A media file that cannot be decoded or tracked.
    case media
    /// A Python reference (LiteRT, MediaPipe) is missing or failed.
    case reference
    /// The baseline to compare with is missing or is not a `bench models --json` report.
    case baseline
}

package typealias BenchmarkError = CodedError<BenchmarkFailure>
