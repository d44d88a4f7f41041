/// The one error type ferry reports to users: a code, a message, where the input was bad,
/// and what caused it.
///
/// Shaped like swift-nio's `FileSystemError`: `Code` is a struct over a private enum so that
/// new codes do not break clients. Messages name files, entities and attributes, never bulk
/// user data (record values go to rejects files, not logs).
public struct FerryError: Error, Sendable, CustomStringConvertible {
    /// What kind of error it is (exit codes and reports follow from it).
    public var code: Code
    /// The message, naming files, entities and attributes, never bulk user data.
    public var message: String
    /// Where the bad input is, when the error is about input.
    public var location: InputLocation?
    /// Extra lines shown under the message (a hint, the offending source line and a caret).
    public var notes: [String]
    /// The error that caused this one, when there is one.
    public var underlying: (any Error & Sendable)?

    /// An error with `code` and `message`, at `location` when it is about input.
    ///
    /// ```swift
    /// throw FerryError(.migration, "Customer 42: cannot normalise the phone number")
    /// ```
    public init(
        _ code: Code,
        _ message: String,
        at location: InputLocation? = nil,
        notes: [String] = [],
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.location = location
        self.notes = notes
        self.underlying = underlying
    }

    /// `file:line:column: error: message (record N)` followed by the notes, one per line.
    public var description: String {
        var text = ""
        if let location { text += "\(location): " }
        text += "error: \(message)"
        if let record = location?.record { text += " (record \(record))" }
        for note in notes { text += "\n  \(note)" }
        return text
    }

    /// What kind of failure this is; decides the process exit code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String, Sendable, Hashable {
            case invalidModel, invalidDefinition, invalidInput, invalidPredicate, invalidExpression
            case modelMismatch, store, constraint, validation, rejectBudget, migration
            case verification, io, noInput, usage, cancelled, `internal`
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// A model file or model bundle is wrong.
        public static let invalidModel = Code(.invalidModel)
        /// A job, mapping or expectations file is wrong.
        public static let invalidDefinition = Code(.invalidDefinition)
        /// A data file (CSV, JSON, NDJSON) is malformed.
        public static let invalidInput = Code(.invalidInput)
        /// A predicate does not parse or does not fit the model.
        public static let invalidPredicate = Code(.invalidPredicate)
        /// A value expression does not parse or does not fit the model.
        public static let invalidExpression = Code(.invalidExpression)
        /// The store was made with another model version.
        public static let modelMismatch = Code(.modelMismatch)
        /// SQLite reported an error.
        public static let store = Code(.store)
        /// A uniqueness, foreign key or delete-rule constraint was violated.
        public static let constraint = Code(.constraint)
        /// A value failed the model's validation rules or could not be coerced.
        public static let validation = Code(.validation)
        /// More records were rejected than the step allows.
        public static let rejectBudget = Code(.rejectBudget)
        /// A migration could not be planned or run.
        public static let migration = Code(.migration)
        /// A verification check failed.
        public static let verification = Code(.verification)
        /// A file could not be read or written.
        public static let io = Code(.io)
        /// A source pattern (`nightly/*.csv`) matched no file: there is nothing to read.
        public static let noInput = Code(.noInput)
        /// The command line was used wrongly.
        public static let usage = Code(.usage)
        /// The operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// A bug in ferry.
        public static let `internal` = Code(.internal)

        /// The code's name (`invalidInput`, `migration`, …).
        public var description: String { kind.rawValue }

        /// True for errors in what the user wrote (definitions, models, predicates, usage).
        public var isConfiguration: Bool {
            switch kind {
            case .invalidModel, .invalidDefinition, .invalidPredicate, .invalidExpression, .usage, .modelMismatch:
                return true
            default:
                return false
            }
        }
    }
}

extension FerryError {
    /// An error that holds several problems found in one pass (e.g. every problem in a model).
    public static func combined(_ errors: [FerryError]) -> FerryError {
        precondition(!errors.isEmpty)
        if errors.count == 1 { return errors[0] }
        var first = errors[0]
        first.notes += errors.dropFirst().map { $0.description }
        return first
    }
}

/// Several problems reported together, each with its own location (model checks, job checks).
public struct FerryErrors: Error, Sendable, CustomStringConvertible {
    /// The problems, in the order found.
    public var errors: [FerryError]
    /// The problems `errors` (at least one).
    public init(_ errors: [FerryError]) { self.errors = errors }
    /// Every problem's description, one per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
    /// The code of the first error.
    public var code: FerryError.Code { errors.first?.code ?? .internal }
}
