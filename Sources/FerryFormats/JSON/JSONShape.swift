/// How the records of a JSON document or NDJSON file are laid out (`json: {shape: …}`).
public enum JSONShape: Sendable, Hashable {
    /// An array of objects (JSON), one object per line (NDJSON): each key a field. The default.
    case records
    /// One object whose members are the records (`{"1001": {…}, "1002": {…}}`), read member by
    /// member; each member's name becomes the field `keyField` of its record (JSON only).
    case object(keyField: String)
    /// Arrays of values (`[["id", "name"], [1, "Ann"]]`, or one array per NDJSON line): the
    /// first array names the columns, unless `columns` does (then every array is a record).
    case rows(columns: [String]?)
}
