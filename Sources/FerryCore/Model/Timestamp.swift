/// An instant, exactly as the store it came from holds it: whole milliseconds since
/// 1970-01-01T00:00:00Z (ferry's and PostgreSQL's dates, every date parsed from text or computed),
/// or the `Double` of seconds since 2001-01-01T00:00:00Z that a Core Data store keeps, bit for bit
/// (Core Data's dates carry sub-millisecond digits: `569186950.058821`).
///
/// The two forms are one scale: a Core Data double that is exactly what ferry writes for a whole
/// millisecond (`Double(ms) / 1000 - 978307200`) *is* that millisecond, so a date written by
/// ferry and read back compares equal to the one written, and ms-precision dates format, hash and
/// checksum as they always have. Equality and order are those of the instants.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Seconds from 1970-01-01 to 2001-01-01 (Core Data's reference date).
    package static let referenceDateOffset: Double = 978_307_200

    /// The reference-date seconds this type accepts: within ±1e13 (about ±317,000 years), where
    /// a millisecond is always many ulps wide, so whole milliseconds are recognized exactly.
    package static let referenceSecondsLimit: Double = 1e13

    private enum Storage: Hashable {
        case milliseconds(Int64)
        case referenceSeconds(Double)
    }

    private let storage: Storage

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z.
    public init(milliseconds: Int64) { storage = .milliseconds(milliseconds) }

    /// The instant a Core Data store writes as `seconds` since 2001-01-01T00:00:00Z, kept exactly;
    /// nil for a value that is not finite or beyond ±1e13 seconds.
    public init?(referenceSeconds seconds: Double) {
        guard seconds.isFinite, abs(seconds) < Self.referenceSecondsLimit else { return nil }
        let millis = Int64(((seconds + Self.referenceDateOffset) * 1000).rounded())
        if Self.referenceSeconds(ofMilliseconds: millis) == seconds {
            storage = .milliseconds(millis)
        } else {
            storage = .referenceSeconds(seconds)
        }
    }

    /// What ferry writes into a Core Data store for a whole millisecond (the one conversion from
    /// milliseconds to reference seconds).
    @inline(__always)
    static func referenceSeconds(ofMilliseconds millis: Int64) -> Double {
        Double(millis) / 1000 - referenceDateOffset
    }

    /// The whole millisecond whose *nearest* double this instant's reference seconds are, when
    /// it is one that ferry does not write that way: an app whose clock ticks in microseconds
    /// gives Core Data one such date in a thousand (the wibosco stores: 12 of 7,995, such as
    /// `526913891.308`). The instant keeps its double (and its text its fourth digit,
    /// `…11.3080Z`, so it reads back bit for bit), but a store that keeps microseconds
    /// (PostgreSQL) holds it as the whole millisecond: checksums count it as that millisecond.
    package var nearestWholeMillisecond: Int64? {
        guard case .referenceSeconds(let seconds) = storage else { return nil }
        let millis = Int64(((seconds + Self.referenceDateOffset) * 1000).rounded())
        let (relative, overflow) = millis.subtractingReportingOverflow(978_307_200_000)
        return !overflow && Double(relative) / 1000 == seconds ? millis : nil
    }

    /// Seconds since 2001-01-01T00:00:00Z, as a Core Data store holds the date (exact for a date
    /// read from one; the nearest double for whole milliseconds).
    public var referenceSeconds: Double {
        switch storage {
        case .milliseconds(let millis): return Self.referenceSeconds(ofMilliseconds: millis)
        case .referenceSeconds(let seconds): return seconds
        }
    }

    /// Milliseconds since 1970-01-01T00:00:00Z, rounded down (toward the past) for an instant
    /// between two milliseconds.
    public var milliseconds: Int64 {
        switch storage {
        case .milliseconds(let millis): return millis
        case .referenceSeconds(let seconds):
            // An estimate within a millisecond, then settled against the exact conversion.
            var millis = Int64(((seconds + Self.referenceDateOffset) * 1000).rounded(.down))
            while Self.referenceSeconds(ofMilliseconds: millis) > seconds { millis -= 1 }
            while Self.referenceSeconds(ofMilliseconds: millis + 1) <= seconds { millis += 1 }
            return millis
        }
    }

    /// True when the instant is a whole millisecond (every date not read from a Core Data store,
    /// and Core Data dates without sub-millisecond digits).
    public var isWholeMilliseconds: Bool {
        if case .milliseconds = storage { return true }
        return false
    }

    /// The instant moved by `milliseconds` (date arithmetic works in whole milliseconds: a Core
    /// Data date keeps its sub-millisecond digits only when it is not moved).
    public func adding(milliseconds delta: Int64) -> Timestamp {
        delta == 0 ? self : Timestamp(milliseconds: milliseconds + delta)
    }

    /// Earlier instants first.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        if case .milliseconds(let a) = lhs.storage, case .milliseconds(let b) = rhs.storage { return a < b }
        // Distinct whole milliseconds map to distinct, increasing doubles, and a double that is a
        // whole millisecond's is stored as that millisecond: comparing doubles is exact here.
        return lhs.referenceSeconds < rhs.referenceSeconds
    }

    /// `YYYY-MM-DDTHH:MM:SS.sssZ`, with more fractional digits for an instant between two
    /// milliseconds (see `DateCoding.format(_:)`).
    public var description: String { DateCoding.format(self) }

    /// Whole milliseconds as an integer (the form `Value` has always encoded), other instants as
    /// their reference seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch storage {
        case .milliseconds(let millis): try container.encode(millis)
        case .referenceSeconds(let seconds): try container.encode(seconds)
        }
    }

    /// Reads what ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let millis = try? container.decode(Int64.self) {
            self.init(milliseconds: millis)
            return
        }
        let seconds = try container.decode(Double.self)
        guard let instant = Timestamp(referenceSeconds: seconds) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(seconds) is not a date's seconds since 2001-01-01")
        }
        self = instant
    }
}
