// shop-ferry: ferry's command line with the Shop sample's migration policy and stage hook.
//
//   swift build --package-path samples/custom-policy
//   samples/custom-policy/.build/debug/shop-ferry migrate shop.sqlite --model samples/models/Shop
import FerryCommandLine
import FerryCore
import Foundation

// A registry of its own (`PolicyRegistry.shared` works too: it is main's default).
let registry = PolicyRegistry()

// `policy: PhoneNormalizer` in samples/models/Shop/mappings/2-to-3.yml.
registry.register("PhoneNormalizer") { PhoneNormalizer(defaultCountryCode: "64") }

// After the 2 → 3 step wrote the new store, before it is verified: report how many customers
// have a phone number, and refuse the step if any number is not in E.164 form.
registry.registerStage(
    from: "2", to: "3",
    didMigrate: { stage in
        let customers = try stage.scalar("SELECT count(*) FROM \(stage.schema).Customer")?.int64 ?? 0
        let phones = try stage.scalar("SELECT count(phone) FROM \(stage.schema).Customer")?.int64 ?? 0
        let malformed =
            try stage.scalar(
                "SELECT count(*) FROM \(stage.schema).Customer WHERE phone IS NOT NULL AND (phone NOT GLOB '+[1-9]*' OR substr(phone, 2) GLOB '*[^0-9]*')"
            )?.int64 ?? 0
        guard malformed == 0 else {
            throw FerryError(
                .migration,
                "Shop \(stage.fromVersion) → \(stage.toVersion): \(malformed) phone numbers are not in E.164 form")
        }
        FileHandle.standardError.write(
            Data(
                "shop-ferry: Shop \(stage.fromVersion) → \(stage.toVersion): \(phones) of \(customers) customers have a phone number, all in E.164 form\n"
                    .utf8))
    })

FerryCommandLine.main(registry: registry)
