import FerryCore
import FerryPipeline
import Foundation

/// ferry's documented exit codes, and how errors and run failures map to them.
enum ExitStatus {
    /// Everything succeeded.
    static let success: Int32 = 0
    /// A step failed (unreadable input, a store error, a failed migration).
    static let stepFailed: Int32 = 1
    /// A step rejected more records than its `max_rejects` allows (and was rolled back).
    static let rejectsOverBudget: Int32 = 2
    /// A verification check failed.
    static let verificationFailed: Int32 = 3
    /// The job, model, mapping or command line is wrong; nothing was touched.
    static let configuration: Int32 = 64
    /// Interrupted by SIGINT (130) or SIGTERM (143): 128 + the signal, as shells report it.
    static func interrupted(by signal: Int32) -> Int32 { 128 + signal }
    /// `ferry model diff`: the versions differ in ways lightweight migration cannot infer; a
    /// mapping file (or a model fix) is needed.
    static let needsMapping: Int32 = 65
    /// An input file does not exist, or a source pattern matched no file (sysexits' EX_NOINPUT).
    static let noInput: Int32 = 66

    /// The exit code for an error.
    static func code(for error: any Error) -> Int32 {
        code(for: RunFailure(error))
    }

    /// The exit code of a run: 0 without a failure.
    static func code(for failure: RunFailure?) -> Int32 {
        switch failure {
        case nil: return success
        case .verificationFailed: return verificationFailed
        case .stepFailed, .error(nil): return stepFailed
        case .error(let code?):
            if code == .rejectBudget { return rejectsOverBudget }
            if code == .verification { return verificationFailed }
            if code == .noInput { return noInput }
            if code == .cancelled { return interrupted(by: Interruption.signal ?? SIGINT) }
            if code.isConfiguration { return configuration }
            return stepFailed
        }
    }
}
