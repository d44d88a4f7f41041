import FerryCore

/// One token of a JSON document, as ``JSONTokenizer`` reports it.
enum JSONToken: UInt8, Sendable {
    case beginObject, endObject, beginArray, endArray
    /// A string in key position (the tokenizer has checked the `:` that follows on the next call).
    case key
    case string, number, `true`, `false`, null
    /// The end of the document (or of the NDJSON line): only white space followed the value.
    case end
}

/// A streaming pull tokenizer for one JSON document (RFC 8259).
///
/// Reads a ``ByteWindow`` chunk by chunk; tokens may span chunk boundaries anywhere. The grammar
/// is checked as tokens are pulled (colons, commas, brackets), nesting is tracked on an explicit
/// stack limited to ``maxDepth`` levels, and every error is a located ``FerryError``. Strings
/// are validated UTF-8 with all escapes decoded; lone surrogates are errors. Numbers follow the
/// strict RFC grammar and keep their source spelling.
///
/// In *line mode* (NDJSON) the tokenizer reads one line already in the window and never refills.
///
/// Performance: this is a hot path. Stored properties of the JSON reading classes are marked
/// `@exclusivity(unchecked)`: none of them is ever accessed overlappingly (closures passed to
/// `withStringBytes` touch other objects only), and the dynamic checks otherwise cost more than
/// half of the parsing time.
final class JSONTokenizer {
    let window: ByteWindow
    let sourceName: String
    let maxDepth: Int
    /// The most bytes one record (the kept span from the mark, or one token) may take in the window.
    let maxRecordBytes: Int
    /// The record number put into error locations (nil outside records).
    @exclusivity(unchecked) var record: Int?
    /// A window index whose bytes are kept across refills (the start of the current record).
    @exclusivity(unchecked) var mark: Int?

    private let streaming: Bool
    @exclusivity(unchecked) private var buf: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var end: Int
    /// Index of the next unread byte.
    @exclusivity(unchecked) private(set) var pos = 0
    /// Index of the first byte of the last token.
    @exclusivity(unchecked) private(set) var tokenStart = 0
    /// Current 1-based line, and the absolute offset of its first byte.
    @exclusivity(unchecked) private(set) var line = 1
    @exclusivity(unchecked) private var lineStart = 0

    private enum State { case value, firstValueOrEnd, firstKeyOrEnd, key, colon, commaOrEnd, done }
    @exclusivity(unchecked) private var state = State.value
    /// Open containers, innermost last: true for an object.
    @exclusivity(unchecked) private var stack: [Bool] = []
    @exclusivity(unchecked) private var checkBOM: Bool

    // The last string or key: either in the window or decoded into `scratch`.
    @exclusivity(unchecked) private var stringInWindow = true
    @exclusivity(unchecked) private var stringStart = 0
    @exclusivity(unchecked) private var stringCount = 0
    @exclusivity(unchecked) private var scratch: [UInt8] = []

    /// A streaming tokenizer over a whole document.
    init(
        window: ByteWindow, sourceName: String, maxDepth: Int = JSONSyntax.maxDepth,
        maxRecordBytes: Int = RecordLimits.defaultMaxRecordBytes
    ) {
        self.window = window
        self.sourceName = sourceName
        self.maxDepth = maxDepth
        self.maxRecordBytes = max(1, maxRecordBytes)
        streaming = true
        checkBOM = true
        buf = window.base
        end = window.end
        scratch.reserveCapacity(256)
    }

    /// A tokenizer for NDJSON lines; call ``reset(lineFrom:to:line:)`` before each line.
    init(lineWindow window: ByteWindow, sourceName: String, maxDepth: Int = JSONSyntax.maxDepth) {
        self.window = window
        self.sourceName = sourceName
        self.maxDepth = maxDepth
        // The NDJSON reader bounds whole lines before the tokenizer sees them.
        self.maxRecordBytes = Int.max
        streaming = false
        checkBOM = false
        buf = window.base
        end = 0
        scratch.reserveCapacity(256)
    }

    /// Starts a new document on the window bytes `[start, stop)`, which are line `line`.
    func reset(lineFrom start: Int, to stop: Int, line: Int) {
        buf = window.base
        pos = start
        tokenStart = start
        end = stop
        self.line = line
        lineStart = window.offset + start
        state = .value
        stack.removeAll(keepingCapacity: true)
        mark = nil
    }

    /// How many containers are open.
    var depth: Int { stack.count }

    /// 1-based byte column of the last token's first byte (valid until the next call).
    var tokenColumn: Int { window.offset + tokenStart - lineStart + 1 }

    /// 1-based byte column of a window index on the current line.
    func column(at index: Int) -> Int { window.offset + index - lineStart + 1 }

    /// The bytes of the last `.string` or `.key` token, decoded; valid until the next call.
    @inline(__always)
    func withStringBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if stringInWindow {
            return try body(UnsafeBufferPointer(start: buf + stringStart, count: stringCount))
        }
        return try scratch.withUnsafeBufferPointer { try body($0) }
    }

    /// The last `.string` or `.key` token as a `String`.
    func stringValue() -> String {
        withStringBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The source bytes of the last token (a number's exact spelling).
    @inline(__always)
    func withTokenBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: buf + tokenStart, count: pos - tokenStart))
    }

    /// The source text from window index `start` up to the current position.
    func sourceText(from start: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: buf + start, count: pos - start), as: UTF8.self)
    }

    /// The source bytes from `start` up to the current position.
    func sourceBytes(from start: Int) -> [UInt8] {
        [UInt8](UnsafeBufferPointer(start: buf + start, count: pos - start))
    }

    /// Calls `body` with the source bytes from the mark up to the current position (empty
    /// without a mark), in place.
    func withMarkedBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard let mark else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: buf + mark, count: pos - mark))
    }

    /// The source text from the mark up to the current position (empty without a mark).
    func markedText() -> String {
        guard let mark else { return "" }
        return sourceText(from: mark)
    }

    /// The source bytes from the mark up to the current position (empty without a mark).
    func markedBytes() -> [UInt8] {
        guard let mark else { return [] }
        return sourceBytes(from: mark)
    }

    /// Consumes the rest of the container whose begin token was just returned.
    func skipContainer() throws {
        let target = stack.count - 1
        while stack.count > target { _ = try next() }
    }

    /// A located `.invalidInput` error at a window index.
    func error(_ message: String, at index: Int) -> FerryError {
        FerryError(
            .invalidInput, message,
            at: InputLocation(file: sourceName, line: line, column: column(at: index), record: record))
    }

    // MARK: - Pulling tokens

    /// The next token; throws a located error at the first byte that breaks the grammar.
    func next() throws -> JSONToken {
        if checkBOM {
            checkBOM = false
            try skipByteOrderMark()
        }
        var c = try skipWhitespace()
        switch state {
        case .value:
            return try value(c)
        case .firstValueOrEnd:
            if c == 0x5D { return close() }
            return try value(c)
        case .firstKeyOrEnd:
            if c == 0x7D { return close() }
            return try key(c)
        case .key:
            return try key(c)
        case .colon:
            guard c == 0x3A else { throw error("expected ':' after an object key, found \(describe(c))", at: pos) }
            pos += 1
            c = try skipWhitespace()
            return try value(c)
        case .commaOrEnd:
            let inObject = stack[stack.count - 1]
            if c == 0x2C {
                pos += 1
                c = try skipWhitespace()
                return inObject ? try key(c) : try value(c)
            }
            if c == (inObject ? 0x7D : 0x5D) { return close() }
            let expected = inObject ? "',' or '}' after an object member" : "',' or ']' after an array element"
            throw error("expected \(expected), found \(describe(c))", at: pos)
        case .done:
            if c < 0 { return .end }
            throw error("unexpected \(describe(c)) after the JSON value", at: pos)
        }
    }

    @inline(__always)
    private func afterValue() {
        state = stack.isEmpty ? .done : .commaOrEnd
    }

    @inline(__always)
    private func close() -> JSONToken {
        tokenStart = pos
        pos += 1
        let wasObject = stack.removeLast()
        afterValue()
        return wasObject ? .endObject : .endArray
    }

    private func open(object: Bool) throws -> JSONToken {
        tokenStart = pos
        if stack.count >= maxDepth {
            throw error("JSON nesting is deeper than \(maxDepth) levels", at: pos)
        }
        pos += 1
        stack.append(object)
        state = object ? .firstKeyOrEnd : .firstValueOrEnd
        return object ? .beginObject : .beginArray
    }

    private func key(_ c: Int) throws -> JSONToken {
        guard c == 0x22 else {
            throw error("expected a string key, found \(describe(c))", at: pos)
        }
        try scanString()
        state = .colon
        return .key
    }

    private func value(_ c: Int) throws -> JSONToken {
        switch c {
        case 0x22:
            try scanString()
            afterValue()
            return .string
        case 0x7B:
            return try open(object: true)
        case 0x5B:
            return try open(object: false)
        case 0x2D, 0x30...0x39:
            try scanNumber()
            afterValue()
            return .number
        case 0x74:
            try scanLiteral("true")
            afterValue()
            return .true
        case 0x66:
            try scanLiteral("false")
            afterValue()
            return .false
        case 0x6E:
            try scanLiteral("null")
            afterValue()
            return .null
        default:
            throw error("expected a value, found \(describe(c))", at: pos)
        }
    }

    /// A readable name for a byte (or the end of input, -1) in messages.
    private func describe(_ c: Int) -> String {
        if c < 0 { return "end of input" }
        if c == 0x27 { return "\"'\"" }
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(UInt8(c))))'" }
        let hex = String(c, radix: 16, uppercase: true)
        return "byte 0x\(hex.count < 2 ? "0" + hex : hex)"
    }

    // MARK: - Window

    /// Reads one more chunk, keeping the current token and the mark; returns the shift of
    /// window indexes (callers subtract it from their own indexes, even at the end of the input)
    /// and whether more bytes arrived.
    private func refill() throws -> (shift: Int, more: Bool) {
        guard streaming else { return (0, false) }
        let keep = min(tokenStart, mark ?? tokenStart)
        if window.end - keep >= maxRecordBytes {
            throw error("record is longer than \(RecordLimits.describe(maxRecordBytes))", at: tokenStart)
        }
        let (shift, read) = try window.refill(keeping: keep)
        tokenStart -= shift
        if let m = mark { mark = m - shift }
        pos -= shift
        buf = window.base
        end = window.end
        return (shift, read > 0)
    }

    /// Makes `count` bytes from `i` available if the input has them; adjusts `i` for the shift.
    @inline(__always)
    private func ensure(_ count: Int, from i: inout Int) throws -> Bool {
        while i + count > end {
            let (shift, more) = try refill()
            i -= shift
            if !more { return false }
        }
        return true
    }

    private func skipByteOrderMark() throws {
        var i = pos
        tokenStart = pos
        guard try ensure(3, from: &i) else { return }
        pos = i
        if buf[i] == 0xEF && buf[i + 1] == 0xBB && buf[i + 2] == 0xBF {
            // A UTF-8 byte order mark is ignored (RFC 8259 §8.1 allows it); columns start after it.
            pos = i + 3
            lineStart = window.offset + pos
        }
    }

    /// Skips white space; returns the next byte (not consumed) or -1 at the end of the input.
    @inline(__always)
    private func skipWhitespace() throws -> Int {
        tokenStart = pos
        while true {
            while pos < end {
                let b = buf[pos]
                if b == 0x20 || b == 0x09 || b == 0x0D {
                    pos += 1
                } else if b == 0x0A {
                    pos += 1
                    line += 1
                    lineStart = window.offset + pos
                } else {
                    tokenStart = pos
                    return Int(b)
                }
            }
            tokenStart = pos
            guard try refill().more else {
                tokenStart = pos
                return -1
            }
        }
    }

    // MARK: - Scalars

    private func scanLiteral(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        var i = pos
        tokenStart = pos
        let ok = try ensure(count, from: &i)
        pos = i
        let bytes = word.utf8Start
        var n = 0
        while n < count && i + n < end && buf[i + n] == bytes[n] { n += 1 }
        guard ok && n == count else {
            if i + n >= end { throw error("unexpected end of input in a literal", at: end) }
            throw error("invalid literal (expected '\(word)')", at: i)
        }
        pos = i + count
        if try peek() > 0, isWordByte(buf[pos]) {
            throw error("invalid literal (expected '\(word)')", at: i)
        }
    }

    @inline(__always)
    private func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) || b == 0x2E || b == 0x2B || b == 0x2D
            || b >= 0x80
    }

    /// Makes the byte at `pos` available; returns it, or -1 at the end of the input.
    @inline(__always)
    private func peek() throws -> Int {
        if pos < end { return Int(buf[pos]) }
        var i = pos
        guard try ensure(1, from: &i) else { return -1 }
        pos = i
        return Int(buf[pos])
    }

    @inline(__always)
    private func isDigit(_ c: Int) -> Bool { c >= 0x30 && c <= 0x39 }

    private func scanNumber() throws {
        tokenStart = pos
        var c = Int(buf[pos])
        if c == 0x2D {
            pos += 1
            c = try peek()
            guard isDigit(c) else { throw error("invalid number: expected a digit after '-'", at: pos) }
        }
        if c == 0x30 {
            pos += 1
            c = try peek()
            if isDigit(c) { throw error("invalid number: leading zeros are not allowed", at: tokenStart) }
        } else {
            while true {
                while pos < end && buf[pos] >= 0x30 && buf[pos] <= 0x39 { pos += 1 }
                c = try peek()
                if !isDigit(c) { break }
            }
        }
        if c == 0x2E {
            pos += 1
            c = try peek()
            guard isDigit(c) else { throw error("invalid number: expected a digit after '.'", at: pos) }
            while true {
                while pos < end && buf[pos] >= 0x30 && buf[pos] <= 0x39 { pos += 1 }
                c = try peek()
                if !isDigit(c) { break }
            }
        }
        if c == 0x65 || c == 0x45 {
            pos += 1
            c = try peek()
            if c == 0x2B || c == 0x2D {
                pos += 1
                c = try peek()
            }
            guard isDigit(c) else { throw error("invalid number: expected a digit in the exponent", at: pos) }
            while true {
                while pos < end && buf[pos] >= 0x30 && buf[pos] <= 0x39 { pos += 1 }
                c = try peek()
                if !isDigit(c) { break }
            }
        }
        if c >= 0, isWordByte(UInt8(c)) {
            throw error("invalid number: unexpected \(describe(c))", at: pos)
        }
    }

    // MARK: - Strings

    /// Scans a string starting at the quote at `pos`; leaves `pos` after the closing quote.
    private func scanString() throws {
        tokenStart = pos
        var i = pos + 1
        // Fast path: no escapes. Bytes stay in the window.
        while true {
            while i < end {
                let p = buf
                let e = end
                while i < e {
                    let b = p[i]
                    if b >= 0x20 && b < 0x80 && b != 0x22 && b != 0x5C { i += 1 } else { break }
                }
                if i == e { break }
                let b = p[i]
                if b == 0x22 {
                    stringInWindow = true
                    stringStart = tokenStart + 1
                    stringCount = i - stringStart
                    pos = i + 1
                    return
                }
                if b == 0x5C {
                    try scanEscapedString(from: i)
                    return
                }
                if b < 0x20 { throw controlCharacter(b, at: i) }
                let count = try validateUTF8(at: &i)
                i += count
            }
            pos = i
            let (shift, more) = try refill()
            i -= shift
            if !more { throw error("unexpected end of input in a string", at: end) }
        }
    }

    private func controlCharacter(_ b: UInt8, at i: Int) -> FerryError {
        let hex = String(b, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: 4 - hex.count) + hex
        return error("control character \(code) in a string must be escaped", at: i)
    }

    /// Checks the UTF-8 sequence whose lead byte (>= 0x80) is at `i`; returns its length.
    /// `i` is adjusted when a refill moves the window.
    private func validateUTF8(at i: inout Int) throws -> Int {
        let b0 = buf[i]
        guard let (count, second) = UTF8Sequence.shape(lead: b0) else {
            throw error("invalid UTF-8 byte 0x\(String(b0, radix: 16, uppercase: true)) in a string", at: i)
        }
        pos = i
        guard try ensure(count, from: &i) else { throw error("invalid UTF-8 sequence in a string", at: i) }
        guard second.contains(buf[i + 1]) else { throw error("invalid UTF-8 sequence in a string", at: i) }
        if count > 2 {
            guard buf[i + 2] & 0xC0 == 0x80 else { throw error("invalid UTF-8 sequence in a string", at: i) }
            if count > 3 {
                guard buf[i + 3] & 0xC0 == 0x80 else { throw error("invalid UTF-8 sequence in a string", at: i) }
            }
        }
        return count
    }

    /// The slow path: the string at `tokenStart` has an escape at `escape`; decode into `scratch`.
    private func scanEscapedString(from escape: Int) throws {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: buf + tokenStart + 1, count: escape - tokenStart - 1))
        var i = escape
        while true {
            if i >= end {
                pos = i
                let (shift, more) = try refill()
                i -= shift
                if !more { throw error("unexpected end of input in a string", at: end) }
                continue
            }
            let b = buf[i]
            if b == 0x22 {
                stringInWindow = false
                pos = i + 1
                return
            }
            if b == 0x5C {
                i = try decodeEscape(at: i)
            } else if b < 0x20 {
                throw controlCharacter(b, at: i)
            } else if b < 0x80 {
                scratch.append(b)
                i += 1
            } else {
                let count = try validateUTF8(at: &i)
                scratch.append(contentsOf: UnsafeBufferPointer(start: buf + i, count: count))
                i += count
            }
        }
    }

    /// Decodes the escape whose backslash is at `start` into `scratch`; returns the index after it.
    private func decodeEscape(at start: Int) throws -> Int {
        var i = start
        pos = i
        guard try ensure(2, from: &i) else { throw error("unexpected end of input in a string", at: end) }
        let e = buf[i + 1]
        switch e {
        case 0x22, 0x5C, 0x2F: scratch.append(e)
        case 0x62: scratch.append(0x08)
        case 0x66: scratch.append(0x0C)
        case 0x6E: scratch.append(0x0A)
        case 0x72: scratch.append(0x0D)
        case 0x74: scratch.append(0x09)
        case 0x75:
            var scalar = try hex4(at: &i)
            var length = 6
            if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw error("lone surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string", at: i)
            }
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                let high = scalar
                pos = i
                let paired = try ensure(8, from: &i) && buf[i + 6] == 0x5C && buf[i + 7] == 0x75
                guard paired else {
                    throw error("lone surrogate \\u\(String(high, radix: 16, uppercase: true)) in a string", at: i)
                }
                var j = i + 6
                let low = try hex4(at: &j)
                i = j - 6
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw error("lone surrogate \\u\(String(high, radix: 16, uppercase: true)) in a string", at: i)
                }
                scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                length = 12
            }
            appendUTF8(scalar)
            return i + length
        default:
            if e >= 0x21 && e < 0x7F {
                throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))' in a string", at: i)
            }
            throw error("invalid escape in a string: '\\' followed by \(describe(Int(e)))", at: i)
        }
        return i + 2
    }

    /// Reads the 4 hex digits after `\u` at `i` (the backslash); `i` is adjusted for refills.
    private func hex4(at i: inout Int) throws -> UInt32 {
        pos = i
        _ = try ensure(6, from: &i)
        var value: UInt32 = 0
        for k in 2..<6 {
            guard i + k < end else { throw error("unexpected end of input in a string", at: end) }
            let h = buf[i + k]
            let digit: UInt8
            switch h {
            case 0x30...0x39: digit = h - 0x30
            case 0x41...0x46: digit = h - 0x41 + 10
            case 0x61...0x66: digit = h - 0x61 + 10
            default: throw error("invalid \\u escape in a string (expected 4 hex digits)", at: i)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
