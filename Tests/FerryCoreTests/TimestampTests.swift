import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// `Timestamp`: Core Data's doubles kept bit for bit, ferry's milliseconds kept exactly, one
/// order, and text that reads back as the same instant; checked against Foundation's `Date` over
/// many random values.
@Suite("Timestamp: exact dates from every store")
struct TimestampTests {
    /// Reference seconds spread over years 0000–9999, with a share of values near 2001 and
    /// whole milliseconds, from a fixed seed.
    static func randomSeconds(count: Int, seed: UInt64) -> [Double] {
        var generator = SeededGenerator(state: seed)
        return (0..<count).map { index in
            switch index % 4 {
            case 0: return Double.random(in: -6.4e10...2.5e11, using: &generator)
            case 1: return Double.random(in: -1e9...1e9, using: &generator)
            case 2: return Double.random(in: -2...2, using: &generator)
            default:
                return Timestamp(
                    milliseconds: Int64.random(in: -60_000_000_000_000...200_000_000_000_000, using: &generator)
                ).referenceSeconds
            }
        }
    }

    @Test("a Core Data double is kept bit for bit; ferry's milliseconds are what Foundation's Date gives Core Data")
    func exactness() throws {
        for seconds in Self.randomSeconds(count: 20_000, seed: 1) {
            let instant = try #require(Timestamp(referenceSeconds: seconds))
            #expect(instant.referenceSeconds.bitPattern == seconds.bitPattern)
        }
        var generator = SeededGenerator(state: 2)
        for _ in 0..<20_000 {
            let millis = Int64.random(in: -62_167_219_200_000...253_402_300_799_999, using: &generator)
            let instant = Timestamp(milliseconds: millis)
            // What Core Data would store for this Date (Date.timeIntervalSinceReferenceDate).
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            #expect(instant.referenceSeconds.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern)
            #expect(instant.milliseconds == millis)
            #expect(instant.isWholeMilliseconds)
            // Read back from a Core Data store, it is the same whole millisecond.
            #expect(Timestamp(referenceSeconds: instant.referenceSeconds) == instant)
        }
    }

    @Test(
        "the double nearest to a whole millisecond (a microsecond clock's) keeps its bits and text, and checksums as that millisecond"
    )
    func nearestForm() throws {
        // The wibosco store's Post 529: 526913891.308, which is not Double(ms) / 1000 - 978307200.
        let seconds = 526_913_891.308
        let millis: Int64 = 1_505_221_091_308
        let instant = try #require(Timestamp(referenceSeconds: seconds))
        #expect(instant.referenceSeconds.bitPattern == seconds.bitPattern, "kept bit for bit")
        #expect(instant.description == "2017-09-12T12:58:11.3080Z")
        #expect(DateCoding.parseStored(instant.description)?.referenceSeconds.bitPattern == seconds.bitPattern)
        #expect(instant.nearestWholeMillisecond == millis)
        #expect(Timestamp(milliseconds: millis).nearestWholeMillisecond == nil)
        // As PostgreSQL gives it back (microseconds): the whole millisecond, the same checksum.
        let fromServer = try #require(DateCoding.parseStored("2017-09-12T12:58:11.308Z"))
        var a = RowHasher()
        var b = RowHasher()
        a.add(.date(instant))
        b.add(.date(fromServer))
        #expect(a.finish() == b.finish())
        var c = RowHasher()
        c.add(.date(try #require(Timestamp(referenceSeconds: 569186950.058821))))
        #expect(c.finish() != b.finish())
    }

    @Test("order and equality agree with Foundation's Date; milliseconds round down to the enclosing millisecond")
    func order() throws {
        let values = try Self.randomSeconds(count: 4_000, seed: 3).map {
            try #require(Timestamp(referenceSeconds: $0))
        }
        for (a, b) in zip(values, values.dropFirst()) {
            let x = Date(timeIntervalSinceReferenceDate: a.referenceSeconds)
            let y = Date(timeIntervalSinceReferenceDate: b.referenceSeconds)
            #expect((a < b) == (x < y))
            #expect((a == b) == (x == y))
        }
        #expect(values.sorted().map(\.referenceSeconds) == values.map(\.referenceSeconds).sorted())
        for instant in values {
            let floor = Timestamp(milliseconds: instant.milliseconds)
            let next = Timestamp(milliseconds: instant.milliseconds + 1)
            #expect(floor <= instant && instant < next, "\(instant)")
            #expect(instant.isWholeMilliseconds == (floor == instant))
        }
        // Whole milliseconds and Core Data doubles of them are one value: equal, one hash.
        let millis = Timestamp(milliseconds: 1_547_494_150_059)
        let fromStore = try #require(Timestamp(referenceSeconds: 569186950.059))
        #expect(millis == fromStore)
        #expect(millis.hashValue == fromStore.hashValue)
        #expect(Value.date(1_547_494_150_059) == .date(fromStore))
    }

    @Test("the text form: milliseconds as always, finer instants with the digits that read back bit for bit")
    func text() throws {
        #expect(Timestamp(milliseconds: 0).description == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(milliseconds: 1_547_494_150_059).description == DateCoding.format(Int64(1_547_494_150_059)))
        #expect(
            try #require(Timestamp(referenceSeconds: 569186950.058821)).description == "2019-01-14T19:29:10.058821Z")
        #expect(try #require(Timestamp(referenceSeconds: -0.0001)).description == "2000-12-31T23:59:59.9999Z")
        #expect(try #require(Timestamp(referenceSeconds: -0.25)).description == "2000-12-31T23:59:59.750Z")
        #expect(try #require(Timestamp(referenceSeconds: 1.5e-7)).description == "2001-01-01T00:00:00.00000015Z")
        // Whole milliseconds that Core Data's double holds inexactly still read as milliseconds.
        #expect(try #require(Timestamp(referenceSeconds: 0.1)).description == "2001-01-01T00:00:00.1000Z")
        #expect(try #require(Timestamp(referenceSeconds: 0.1)).isWholeMilliseconds == false)

        for seconds in Self.randomSeconds(count: 20_000, seed: 4) {
            let instant = try #require(Timestamp(referenceSeconds: seconds))
            let text = DateCoding.format(instant)
            let back = try #require(DateCoding.parseStored(text), "\(text)")
            #expect(back.referenceSeconds.bitPattern == seconds.bitPattern, "\(text)")
            // The first 23 characters are the enclosing millisecond's.
            let millisecond = DateCoding.format(instant.milliseconds)
            #expect(text.hasPrefix(String(millisecond.dropLast())), "\(text) vs \(millisecond)")
            #expect(instant.isWholeMilliseconds == (text.utf8.count == millisecond.utf8.count))
            // verify's type check accepts every date a store holds (years 0000–9999).
            var copy = text
            let storable = DateCoding.storableMilliseconds.contains(instant.milliseconds)
            #expect(copy.withUTF8 { WellTyped.isDate($0) } == storable, "\(text)")
        }
        // Text that is not the stored form is refused, not guessed.
        #expect(DateCoding.parseStored("2019-01-14T19:29:10.05x821Z") == nil)
        #expect(DateCoding.parseStored("2019-13-14T19:29:10.058821Z") == nil)
        #expect(DateCoding.parseStored("2019-01-14T19:29:10.058Z") == Timestamp(milliseconds: 1_547_494_150_058))
    }

    @Test("a Value's JSON coding keeps whole milliseconds as the integer it always was, finer dates exactly")
    func coding() throws {
        let encoder = JSONEncoder()
        let whole = Value.date(1_547_494_150_059)
        #expect(
            String(decoding: try encoder.encode(Timestamp(milliseconds: 1_547_494_150_059)), as: UTF8.self)
                == "1547494150059")
        #expect(try JSONDecoder().decode(Value.self, from: encoder.encode(whole)) == whole)
        for seconds in Self.randomSeconds(count: 500, seed: 5) {
            let value = Value.date(try #require(Timestamp(referenceSeconds: seconds)))
            #expect(try JSONDecoder().decode(Value.self, from: encoder.encode(value)) == value)
        }
        #expect(Timestamp(referenceSeconds: .nan) == nil)
        #expect(Timestamp(referenceSeconds: .infinity) == nil)
        #expect(Timestamp(referenceSeconds: 1e300) == nil)
    }

    @Test(
        "a Core Data store's date through the Core Data coding and back is the same double; whole milliseconds write as before"
    )
    func coreDataCoding() throws {
        let coding = CoreDataValueCoding()
        for seconds in Self.randomSeconds(count: 5_000, seed: 6) {
            let value = coding.decode(.real(seconds), as: .date)
            guard case .real(let written) = coding.encode(value) else {
                Issue.record("not a REAL: \(value)")
                continue
            }
            #expect(written.bitPattern == seconds.bitPattern)
            // Through ferry's own coding (a ferry store's text) too.
            let ferry = FerryValueCoding()
            #expect(ferry.decode(ferry.encode(value), as: .date) == value)
        }
        #expect(coding.encode(.date(1_547_494_150_059)) == .real(Double(1_547_494_150_059) / 1000 - 978_307_200))
    }
}
