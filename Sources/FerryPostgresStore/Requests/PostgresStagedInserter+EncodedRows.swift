import FerryCore
import FerryPostgres

/// What the import's fast path needs to stage records already coerced into COPY bytes
/// (``PostgresStagedInserter/stageEncoded(_:)``): the checks ``PostgresStagedInserter/stage(_:supplied:)``
/// makes, per column, so the caller makes exactly the same ones.
extension PostgresStagedInserter {
    /// True when records may be staged as encoded rows: new rows only (`error`, `keep`; `update`
    /// and `replace` need each record's values), and no required attribute is left out of the
    /// columns (every record is then rejected, by ``stage(_:supplied:)``).
    package var acceptsEncodedRows: Bool {
        (policy == .error || policy == .keep) && rules.missingRequired.isEmpty
    }

    /// The validator of each column (nil when validation is off or the column is a relationship).
    package var columnValidators: [AttributeValidator?] { rules.plan.validators }

    /// The default value of each column's attribute (what a null or absent value becomes).
    package var columnDefaults: [Value?] { rules.plan.defaults }

    /// True when column `index` must not be null in a new row (a null there is rejected: `X is
    /// required`).
    package func requiresValue(column index: Int) -> Bool { rules.requiredColumns[index] }

    /// Appends `value` (already defaulted and validated) as the next field of an encoded row, in
    /// the form ``stage(_:supplied:)`` sends it; throws for text holding U+0000.
    package func appendEncoded(_ value: Value, to row: inout PostgresCopyText) throws(PostgresError) {
        try row.appendField(Self.copyValue(rules.coding.encode(value)))
    }
}
