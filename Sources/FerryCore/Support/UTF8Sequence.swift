/// The shape of a well-formed UTF-8 sequence (RFC 3629), from its lead byte: ferry's JSON
/// reader and its JSON validity test (``JSONSyntax``) check strings with it.
package enum UTF8Sequence {
    /// The sequence's length in bytes (2 to 4) and the range its second byte must be in (which
    /// excludes overlong forms, surrogates and code points above U+10FFFF; the later bytes are
    /// all `0x80...0xBF`); nil for a byte that cannot start a multi-byte sequence.
    @inline(__always)
    package static func shape(lead: UInt8) -> (count: Int, second: ClosedRange<UInt8>)? {
        switch lead {
        case 0xC2...0xDF: return (2, 0x80...0xBF)
        case 0xE0: return (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: return (3, 0x80...0xBF)
        case 0xED: return (3, 0x80...0x9F)
        case 0xF0: return (4, 0x90...0xBF)
        case 0xF1...0xF3: return (4, 0x80...0xBF)
        case 0xF4: return (4, 0x80...0x8F)
        default: return nil
        }
    }
}
