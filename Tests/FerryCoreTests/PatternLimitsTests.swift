import FerryCore
import Testing

/// The model checker refuses patterns beyond ``PatternLimits`` before compiling them, whatever
/// made the model (a YAML file, `ferry import`'s inference, a Swift program).
@Suite("pattern limits in the model checker")
struct PatternLimitsTests {
    static func check(pattern: String) -> [String] {
        let attribute = AttributeDescription(
            name: "code", type: .string, validation: ValidationRules(pattern: pattern),
            location: InputLocation(file: "m.yml", line: 4, column: 7))
        let entity = EntityDescription(name: "Item", attributes: [attribute])
        return ModelChecker.check(
            ObjectModel(name: "M", version: "1", entities: [entity], location: InputLocation(file: "m.yml"))
        )
        .map(\.description)
    }

    @Test("400 or 5,000 nested character classes: an error, not a crash while compiling")
    func nestedClasses() {
        let pattern = String(repeating: "[", count: 400) + "a" + String(repeating: "]", count: 400)
        #expect(
            Self.check(pattern: pattern)
                == [
                    "m.yml:4:7: error: pattern is nested too deeply: more than 32 levels of groups and character classes for 'Item.code'"
                ])
        #expect(
            Self.check(pattern: String(repeating: "[", count: 5_000) + "a" + String(repeating: "]", count: 5_000))
                == ["m.yml:4:7: error: pattern is too long: 10001 characters; at most 1000 are allowed for 'Item.code'"]
        )
    }

    @Test("patterns within the limits are compiled and checked as before")
    func withinLimits() {
        #expect(Self.check(pattern: "[A-Z]{2}-[0-9]+") == [])
        #expect(Self.check(pattern: String(repeating: "(", count: 32) + "a" + String(repeating: ")", count: 32)) == [])
        #expect(Self.check(pattern: "[a-") == ["m.yml:4:7: error: invalid pattern '[a-' for 'Item.code'"])
    }
}
