import Foundation
import Testing

@testable import IdentityEmulator

@Suite("Fault plans (--faults)")
struct FaultPlanTests {
    @Test("a SPEC reads as families, kinds, values, rates and a skew")
    func parses() throws {
        let plan = try FaultPlan.parse(
            "token:status=429/5@0.2, graph:latency=100ms, all:drop@0.1,tasks:revoke-refresh, skew=-30, discovery:html")
        #expect(plan.skew == -30)
        #expect(
            plan.rules == [
                .init(family: .token, kind: .status(429, retryAfter: 5), rate: 0.2),
                .init(family: .graph, kind: .latency(.milliseconds(100)), rate: 1),
                .init(family: .all, kind: .drop, rate: 0.1),
                .init(family: .tasks, kind: .revokeRefresh, rate: 1),
                .init(family: .discovery, kind: .html, rate: 1),
            ])
        #expect(try FaultPlan.parse("") == FaultPlan())
        #expect(try FaultPlan.parse("graph:latency=2s").rules.first?.kind == .latency(.seconds(2)))
    }

    @Test(
        "a bad SPEC says what to write",
        arguments: [
            ("graph", "start with a family"), ("web:drop", "start with a family"), ("graph:status=200", "from 400 to 599"),
            ("graph:status=429/x", "whole seconds"), ("graph:drop@1.5", "from 0 to 1"), ("graph:explode", "the fault is one of"),
            ("graph:latency=forever", "latency needs a time"), ("skew=lots", "skew needs seconds"),
        ])
    func refuses(spec: String, says: String) {
        #expect { try FaultPlan.parse(spec) } throws: { error in
            (error as? FaultPlan.ParseError)?.description.contains(says) == true
        }
    }

    @Test("each path belongs to its family; the emulator's own controls are never faulted")
    func families() {
        #expect(FaultPlan.family(ofPath: "/contoso.onmicrosoft.com/oauth2/v2.0/token") == .token)
        #expect(FaultPlan.family(ofPath: "/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration") == .discovery)
        #expect(FaultPlan.family(ofPath: "/contoso.onmicrosoft.com/discovery/v2.0/keys") == .discovery)
        #expect(FaultPlan.family(ofPath: "/v1.0/users") == .graph)
        #expect(FaultPlan.family(ofPath: "/api/tasks") == .tasks)
        #expect(FaultPlan.family(ofPath: "/contoso.onmicrosoft.com/login") == .signin)
        #expect(FaultPlan.family(ofPath: "/.emulator/faults") == nil)
    }
}
