/// What `min_length` and `max_length` measure, for import and `ferry verify` alike: text in
/// UTF-16 code units (Core Data's `NSString.length`), binary data in bytes.
///
/// So `é` written precomposed (U+00E9) has length 1 and decomposed (`e` + U+0301) length 2, and
/// an emoji outside the Basic Multilingual Plane (`😀`) has length 2, exactly as Core Data
/// counts them. Both sides count on the UTF-8 bytes, with ``utf16Count(_:)``.
package enum LengthRule {
    /// The length of a value the rules measure, nil for other values (numbers, dates, …).
    package static func length(of value: Value) -> Int? {
        switch value {
        case .string(var text), .uri(var text): return text.withUTF8 { utf16Count($0) }
        case .binary(let bytes): return bytes.count
        default: return nil
        }
    }

    /// The UTF-16 length of UTF-8 text: one unit per character of one to three bytes, two per
    /// four-byte character (a surrogate pair in UTF-16).
    @inline(__always)
    package static func utf16Count(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        for byte in utf8 {
            // Every byte but a continuation byte (10xxxxxx) starts a character.
            if byte & 0xC0 != 0x80 { count += 1 }
            if byte >= 0xF0 { count += 1 }
        }
        return count
    }
}
