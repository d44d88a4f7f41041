/// An error from ferry's PostgreSQL client: a bad URL, a failed connection, an error the server
/// reported (with its SQLSTATE and, for `COPY`, the line and column it names), a value that
/// cannot be sent, or a lock that stayed taken. Its text never contains a password.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: Sendable, Equatable {
        /// The store string is not a usable PostgreSQL URL.
        case invalidURL
        /// No session could be opened (server down, authentication failed, bad keyword, …).
        case connectionFailed
        /// The server refused a statement; ``sqlState`` says why.
        case server
        /// A value cannot be sent as asked (NUL in text for `COPY`, wrong column count, …).
        case invalidValue
        /// A result value is not of the type asked for.
        case typeMismatch
        /// An advisory lock stayed held by another session until the timeout.
        case lockTimeout
    }

    /// What went wrong, broadly.
    public var kind: Kind
    /// The main message (PostgreSQL's primary message for server errors).
    public var message: String
    /// The five-character SQLSTATE for server errors (`23505` unique violation, …).
    public var sqlState: String?
    /// PostgreSQL's DETAIL, HINT and CONTEXT fields, when it sent them.
    public var detail: String?
    /// PostgreSQL's HINT field.
    public var hint: String?
    /// PostgreSQL's CONTEXT field.
    public var context: String?
    /// For `COPY … FROM STDIN`: the 1-based data line (one line per row) the server or the
    /// encoder rejected, and the column name when known.
    public var copyLine: Int?
    /// The rejected column's name, when known.
    public var copyColumn: String?

    /// An error of `kind` with `message` and whatever the server sent with it.
    public init(
        kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil,
        hint: String? = nil, context: String? = nil, copyLine: Int? = nil, copyColumn: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.context = context
        self.copyLine = copyLine
        self.copyColumn = copyColumn
    }

    static func invalidURL(_ cause: String) -> PostgresError {
        PostgresError(kind: .invalidURL, message: "invalid PostgreSQL URL: \(cause)")
    }

    /// The message, then the COPY row, the SQLSTATE and the DETAIL, HINT and CONTEXT lines.
    public var description: String {
        var text = message
        if let copyLine {
            text += " (COPY row \(copyLine)" + (copyColumn.map { ", column \($0)" } ?? "") + ")"
        }
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        if let detail { text += "\nDETAIL: \(detail)" }
        if let hint { text += "\nHINT: \(hint)" }
        if let context, copyLine == nil { text += "\nCONTEXT: \(context)" }
        return text
    }
}
