import FerryCore

/// What an import does when its source's fields differ from what the step reads
/// (`on_new_field:`, `on_missing_field:`; `--on-new-field`, `--on-missing-field`): a nightly
/// file that grew a column, lost one, or renamed one (a renamed column is a missing field plus
/// a new field). See docs/files.md, *Schema drift*.
public struct SchemaDriftPolicy: Sendable, Hashable {
    /// What a source field that no attribute or relationship reads does.
    public enum NewField: String, Sendable, Hashable, CaseIterable {
        /// Fail the step before its first record is written (located at the header line, or at
        /// the first record with the field), so nothing is lost silently.
        case error
        /// Import the other fields; the report names the field as not imported.
        case ignore
        /// Add the field to the store's model as a new optional attribute of the inferred type
        /// (a lightweight model version recorded in the store), then import it.
        case add
    }

    /// What a field the step reads that the source lacks does.
    public enum MissingField: String, Sendable, Hashable, CaseIterable {
        /// Fail the step before its first record is written, naming the field.
        case error
        /// Read the field as null in every record (an optional attribute stays empty, a required
        /// one rejects its records with their lines).
        case null
    }

    /// `on_new_field:`; nil when the step does not say (``newFieldDefault``).
    public var newField: NewField?
    /// `on_missing_field:`; nil when the step does not say (``missingFieldDefault``).
    public var missingField: MissingField?
    /// Where `on_new_field:` is written.
    public var newFieldLocation: InputLocation?
    /// Where `on_missing_field:` is written.
    public var missingFieldLocation: InputLocation?

    /// A new field is imported without, and said so, unless the step says otherwise: on the
    /// step's line, on standard error under `--quiet` (so cron mails it) and in the report. A
    /// model names what a job keeps, and a source that carries more (an export's extra columns)
    /// is the common case, as Embulk and pgloader read only the columns they are given; a job
    /// that must stop on a changed source says `on_new_field: error`.
    public static let newFieldDefault = NewField.ignore
    /// A field the step names (in `fields:`, a relationship's `field`, a sync's key) that the
    /// source lacks fails the step unless the step says otherwise.
    public static let missingFieldDefault = MissingField.error

    /// The policy a step gets when it says nothing.
    public init(newField: NewField? = nil, missingField: MissingField? = nil) {
        self.newField = newField
        self.missingField = missingField
    }

    /// The new-field policy in force.
    public var onNewField: NewField { newField ?? Self.newFieldDefault }
    /// The missing-field policy in force.
    public var onMissingField: MissingField { missingField ?? Self.missingFieldDefault }
}
