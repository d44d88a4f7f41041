/// ferry's one definition of valid JSON text: exactly one RFC 8259 value, checked on its UTF-8
/// bytes without building anything.
///
/// Every side of ferry asks this type: import coercion (a `json` attribute's text), the `types`
/// check of `ferry verify` (through `ferry_well_typed`, on the stored bytes in place) and export
/// (which embeds stored JSON only when it is valid). So whatever ferry imports, it verifies and
/// exports as the same JSON.
///
/// The rules are RFC 8259's, strictly: no trailing commas, comments, single quotes, `NaN`,
/// leading zeros or `+` signs; white space is only space, tab, LF and CR; strings hold no raw
/// control characters, only the escapes `\" \\ \/ \b \f \n \r \t \uXXXX`, and well-formed UTF-8
/// (no overlong forms, surrogates or bytes above U+10FFFF); no byte order mark. Nesting deeper
/// than ``maxDepth`` is refused, as ferry's JSON readers refuse it.
@usableFromInline package enum JSONSyntax {
    /// The deepest nesting of arrays and objects accepted (the JSON readers' limit too).
    @usableFromInline package static let maxDepth = 512

    /// True when `bytes` is exactly one JSON value (white space around it allowed).
    package static func isValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = Scanner(bytes: bytes)
        scanner.space()
        guard scanner.value(depth: 0) else { return false }
        scanner.space()
        return scanner.index == bytes.count
    }

    /// True when `text` is exactly one JSON value (white space around it allowed).
    package static func isValue(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValue($0) }
    }

    /// True when `bytes` is exactly one JSON number (no white space).
    package static func isNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = Scanner(bytes: bytes)
        return scanner.number() && scanner.index == bytes.count
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func space() {
            while let byte = current, byte == 32 || byte == 9 || byte == 10 || byte == 13 { index += 1 }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"):
                return elements(closedBy: UInt8(ascii: "}"), depth: depth) { scanner in
                    guard scanner.string() else { return false }
                    scanner.space()
                    guard scanner.current == UInt8(ascii: ":") else { return false }
                    scanner.index += 1
                    scanner.space()
                    return scanner.value(depth: depth + 1)
                }
            case UInt8(ascii: "["):
                return elements(closedBy: UInt8(ascii: "]"), depth: depth) { $0.value(depth: depth + 1) }
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        /// An array's values or an object's members, from the opening bracket at `index` to the
        /// closing one, separated by commas; `element` reads one (after white space).
        mutating func elements(closedBy closing: UInt8, depth: Int, _ element: (inout Scanner) -> Bool) -> Bool {
            guard depth < JSONSyntax.maxDepth else { return false }
            index += 1
            space()
            if current == closing {
                index += 1
                return true
            }
            while true {
                space()
                guard element(&self) else { return false }
                space()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard current == closing else { return false }
                index += 1
                return true
            }
        }

        mutating func string() -> Bool {
            guard current == 34 else { return false }
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case 34: return true
                case 92:
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case 34, 92, 47, 98, 102, 110, 114, 116: break
                    case 117:
                        for _ in 0..<4 {
                            guard let hex = current, isHex(hex) else { return false }
                            index += 1
                        }
                    default: return false
                    }
                case 0..<0x20: return false
                case 0x20..<0x80: break
                default:
                    guard multiByteCharacter(lead: byte) else { return false }
                }
            }
            return false
        }

        /// The rest of a UTF-8 sequence whose lead byte was just read (``UTF8Sequence``).
        mutating func multiByteCharacter(lead: UInt8) -> Bool {
            guard let (count, second) = UTF8Sequence.shape(lead: lead), let byte = current, second.contains(byte) else {
                return false
            }
            index += 1
            for _ in 2..<count {
                guard let byte = current, byte & 0xC0 == 0x80 else { return false }
                index += 1
            }
            return true
        }

        func isHex(_ byte: UInt8) -> Bool {
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102)
        }

        mutating func digits() -> Int {
            var count = 0
            while let byte = current, byte >= 48, byte <= 57 {
                index += 1
                count += 1
            }
            return count
        }

        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                return false
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return false }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }
    }
}
