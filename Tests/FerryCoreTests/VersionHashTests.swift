import FerryCore
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test("FIPS 180-4 test vectors")
    func vectors() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // The two-block message of FIPS 180-2's examples (896 bits).
        #expect(
            SHA256.hex(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
            ) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
        // The long message: one million 'a's.
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        #expect(
            SHA256.hexString(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("padding boundaries: 55, 56 and 64 byte messages")
    func boundaries() {
        // Known digests of "a" repeated 55, 56 and 64 times.
        #expect(
            SHA256.hex(String(repeating: "a", count: 55))
                == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(
            SHA256.hex(String(repeating: "a", count: 56))
                == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(
            SHA256.hex(String(repeating: "a", count: 64))
                == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    @Test(
        "a message fed in uneven pieces (whole blocks from buffers, the rest byte by byte) has the digest of the whole")
    func pieces() {
        let message = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        let whole = SHA256.hash(message)
        var pieces = SHA256()
        var offset = 0
        for (index, size) in [1, 63, 65, 7, 200, 64, 0, 129, 3000].enumerated() {
            let piece = message[offset..<min(message.count, offset + size)]
            // Alternately a contiguous slice and a sequence without contiguous storage.
            if index.isMultiple(of: 2) { pieces.update(piece) } else { pieces.update(piece.lazy.map { $0 }) }
            offset += piece.count
        }
        pieces.update(message[offset...])
        #expect(pieces.finalize() == whole)
        var bytewise = SHA256()
        for byte in message { bytewise.update(AnySequence(CollectionOfOne(byte))) }
        #expect(bytewise.finalize() == whole)
    }
}

@Suite("Version hashes")
struct VersionHashTests {
    static func model(
        customer: (inout EntityDescription) -> Void = { _ in },
        reverse: Bool = false
    ) -> ObjectModel {
        var customer0 = EntityDescription(
            name: "Customer",
            attributes: [
                AttributeDescription(name: "id", type: .int64, isOptional: false),
                AttributeDescription(name: "email", type: .string),
                AttributeDescription(name: "age", type: .int16),
            ],
            relationships: [
                RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "customer")
            ],
            uniquenessConstraints: [["id"], ["email", "age"]],
            indexes: [IndexDescription(attributes: ["age"])]
        )
        customer(&customer0)
        if reverse {
            customer0.attributes.reverse()
            customer0.uniquenessConstraints = customer0.uniquenessConstraints.reversed().map { $0.reversed() }
        }
        let order = EntityDescription(
            name: "Order",
            attributes: [AttributeDescription(name: "number", type: .string, isOptional: false)],
            relationships: [RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders")]
        )
        return ObjectModel(name: "Shop", version: "1", entities: reverse ? [order, customer0] : [customer0, order])
    }

    @Test("hashes of a fixed model are pinned")
    func pinned() {
        let model = Self.model()
        #expect(model.entityHashes["Customer"] == "0c0b97a42ffb706d6366b0b1d7e7106e25c6205fb98e38a757fa0b7d3fcd0fdc")
        #expect(model.entityHashes["Order"] == "1180ab92cc948e6e64af5ffaf84de357c07dcd265688d01b38fd068b745de8c1")
        #expect(model.versionHash == "9404626935dc73b76e13773c6453703b7580254a87b0395ad0d4bf438130970e")
    }

    @Test("reordering entities, attributes and constraints changes nothing")
    func order() {
        #expect(Self.model(reverse: true).versionHash == Self.model().versionHash)
        #expect(Self.model(reverse: true).entityHashes == Self.model().entityHashes)
    }

    @Test("defaults, validation rules, renaming hints, delete rules, counts and labels change nothing")
    func ignored() {
        let base = Self.model().versionHash
        let changed = Self.model { entity in
            entity.attributes[1].defaultValue = .string("x")
            entity.attributes[1].validation = ValidationRules(minLength: 1, maxLength: 9, pattern: ".+")
            entity.attributes[2].validation.minValue = .integer(0)
            entity.attributes[1].renamedFrom = "mail"
            entity.renamedFrom = "Client"
            entity.relationships[0].deleteRule = .cascade
            entity.relationships[0].minCount = 1
            entity.relationships[0].renamedFrom = "purchases"
        }
        #expect(changed.versionHash == base)
        var relabelled = Self.model()
        relabelled.name = "Other"
        relabelled.version = "7"
        #expect(relabelled.versionHash == base)
    }

    @Test("types, optionality, modifiers and constraints change the hash", arguments: 0..<7)
    func changes(_ change: Int) {
        let base = Self.model()
        let changed = Self.model { entity in
            switch change {
            case 0: entity.attributes[2].type = .int32
            case 1: entity.attributes[1].isOptional = false
            case 2: entity.attributes[1].hashModifier = "v2"
            case 3: entity.hashModifier = "v2"
            case 4: entity.uniquenessConstraints.append(["age"])
            case 5: entity.relationships[0].isToMany = false
            default: entity.indexes.append(IndexDescription(name: "by_email", attributes: ["email"]))
            }
        }
        #expect(changed.versionHash != base.versionHash)
        #expect(changed.entityHashes["Customer"] != base.entityHashes["Customer"])
        #expect(changed.entityHashes["Order"] == base.entityHashes["Order"])
    }
}
