import FerryCore

/// Why a run failed: what the command line turns into its exit status (the library decides
/// the kind of failure, never the number).
public enum RunFailure: Sendable, Hashable {
    /// An error ended the run; `code` says what kind (nil for an error that is not a
    /// `FerryError`).
    case error(FerryError.Code?)
    /// A verification check failed.
    case verificationFailed
    /// A step failed without an error of its own.
    case stepFailed

    /// The failure `error` causes: an import step's failure is its error's; a list of
    /// definition errors is `noInput` when every one is a missing input, else the first one's.
    public init(_ error: any Error) {
        if let failure = error as? ImportStepFailure {
            self.init(failure.error)
        } else if let errors = error as? FerryErrors {
            self = .error(errors.errors.allSatisfy { $0.code == .noInput } ? .noInput : errors.code)
        } else if let error = error as? FerryError {
            self = .error(error.code)
        } else {
            self = .error(nil)
        }
    }
}
