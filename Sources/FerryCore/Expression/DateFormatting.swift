/// Formats dates (milliseconds since 1970, UTC) with the same pattern letters ``DatePattern``
/// parses, for `format_date`: `yyyy yy MM M MMM MMMM dd d HH H hh h mm m ss s S… a EEE EEEE`,
/// zone letters `X XXX Z` (always UTC, written `Z` or `+00:00`/`+0000`), `'quoted'` literals;
/// or one of the named formats `iso8601`, `unix`, `unix_ms`.
struct DateFormatting: Sendable {
    enum Part: Sendable {
        case year(Int)
        case month(Int)
        case day(Int)
        case hour24(Int)
        case hour12(Int)
        case minute(Int)
        case second(Int)
        case fraction(Int)
        case amPm
        case weekday(Int)
        case zone(Int)
        case letter(Character)
        case literal(String)
        case iso8601, unixSeconds, unixMilliseconds
    }
    let parts: [Part]

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]
    static let weekdayNames = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]

    static func compile(_ text: String) -> Result<DateFormatting, FerryError> {
        switch text.lowercased() {
        case "iso8601", "iso-8601", "rfc3339": return .success(DateFormatting(parts: [.iso8601]))
        case "unix", "epoch", "unix_seconds": return .success(DateFormatting(parts: [.unixSeconds]))
        case "unix_ms", "epoch_ms", "unix_milliseconds": return .success(DateFormatting(parts: [.unixMilliseconds]))
        default: break
        }
        let characters = Array(text)
        var parts: [Part] = []
        var i = 0
        while i < characters.count {
            let c = characters[i]
            if c == "'" {
                var j = i + 1
                var literal = ""
                while j < characters.count, characters[j] != "'" {
                    literal.append(characters[j])
                    j += 1
                }
                parts.append(.literal(j == i + 1 && j < characters.count ? "'" : literal))
                i = j + 1
                continue
            }
            guard c.isASCII, c.isLetter else {
                parts.append(.literal(String(c)))
                i += 1
                continue
            }
            var run = 1
            while i + run < characters.count, characters[i + run] == c { run += 1 }
            switch c {
            case "y", "u": parts.append(.year(run))
            case "M", "L": parts.append(.month(run))
            case "d": parts.append(.day(run))
            case "H": parts.append(.hour24(run))
            case "h": parts.append(.hour12(run))
            case "m": parts.append(.minute(run))
            case "s": parts.append(.second(run))
            case "S": parts.append(.fraction(run))
            case "a": parts.append(.amPm)
            case "E": parts.append(.weekday(run))
            case "X", "x", "Z": parts.append(.zone(run))
            default:
                return .failure(
                    FerryError(
                        .invalidExpression, "unsupported letter '\(c)' in date format '\(text)'",
                        notes: [
                            "supported: yyyy yy MM M MMM MMMM dd d HH H hh h mm m ss s S… a EEE EEEE X XXX Z, 'quoted' literals, iso8601, unix, unix_ms"
                        ]))
            }
            i += run
        }
        return .success(DateFormatting(parts: parts))
    }

    func format(_ millis: Int64) -> String {
        let (dayCount, msOfDay) = Int(millis).quotientAndRemainderFloored(dividingBy: 86_400_000)
        let (year, month, day) = DateCoding.civil(days: dayCount)
        let hour = msOfDay / 3_600_000
        var out = ""
        func pad(_ value: Int, _ width: Int) {
            let digits = String(abs(value))
            if value < 0 { out += "-" }
            if digits.count < width { out += String(repeating: "0", count: width - digits.count) }
            out += digits
        }
        for part in parts {
            switch part {
            case .iso8601: out += DateCoding.format(millis)
            case .unixSeconds:
                let (seconds, ms) = Int(millis).quotientAndRemainderFloored(dividingBy: 1000)
                out += String(seconds)
                if ms != 0 {
                    var fraction = String(1000 + ms).dropFirst()
                    while fraction.last == "0" { fraction = fraction.dropLast() }
                    out += "." + fraction
                }
            case .unixMilliseconds: out += String(millis)
            case .year(let n): n == 2 ? pad(((year % 100) + 100) % 100, 2) : pad(year, max(n, 4))
            case .month(let n):
                if n >= 4 {
                    out += Self.monthNames[month - 1]
                } else if n == 3 {
                    out += Self.monthNames[month - 1].prefix(3)
                } else {
                    pad(month, n)
                }
            case .day(let n): pad(day, n)
            case .hour24(let n): pad(hour, n)
            case .hour12(let n): pad(hour % 12 == 0 ? 12 : hour % 12, n)
            case .minute(let n): pad(msOfDay / 60_000 % 60, n)
            case .second(let n): pad(msOfDay / 1000 % 60, n)
            case .fraction(let n):
                let ms = String(1000 + msOfDay % 1000).dropFirst()
                out += n <= 3 ? String(ms.prefix(n)) : ms + String(repeating: "0", count: n - 3)
            case .amPm: out += hour < 12 ? "AM" : "PM"
            case .weekday(let n):
                let name = Self.weekdayNames[((dayCount % 7) + 7) % 7]
                out += n >= 4 ? name : String(name.prefix(3))
            case .zone(let n):
                // Dates are UTC: X writes Z, XXX +00:00 style zones, Z/ZZ +0000.
                out += n >= 3 ? "+00:00" : (n == 1 ? "Z" : "+0000")
            case .letter(let c): out.append(c)
            case .literal(let text): out += text
            }
        }
        return out
    }
}
