import Foundation

/// Standard SQL text helpers (double-quoted identifiers, single-quoted strings), the same in
/// SQLite and PostgreSQL; reached through a store's ``SQLDialect``, or directly for SQL that only
/// ever runs on SQLite (ferry's own connection set-up, the migration's work database).
package enum SQL {
    /// A double-quoted identifier, with embedded quotes doubled.
    package static func quote(_ identifier: String) -> String {
        doubling(UInt8(ascii: "\""), in: identifier)
    }

    /// A SQL string literal of `text`: `'…'` with every `'` doubled. Text with a NUL byte (which
    /// would end the statement's text early) is written as `(CAST(X'…' AS TEXT))` instead (a DDL default needs the parentheses).
    package static func stringLiteral(_ text: String) -> String {
        guard !text.utf8.contains(0) else {
            return "(CAST(X'" + text.utf8.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + "' AS TEXT))"
        }
        return doubling(UInt8(ascii: "'"), in: text)
    }

    /// `text` between two `quote`s with every `quote` inside doubled, decided byte by byte: never
    /// by Swift `Character`s, where a quote followed by a combining or prepending scalar is one
    /// Character that is not a quote, and would go through undoubled.
    private static func doubling(_ quote: UInt8, in text: String) -> String {
        var bytes: [UInt8] = [quote]
        bytes.reserveCapacity(text.utf8.count + 2)
        for byte in text.utf8 {
            bytes.append(byte)
            if byte == quote { bytes.append(quote) }
        }
        bytes.append(quote)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
