package rpc

// usage/summary's wire types, for TestProtocolCoverage (added here, beside
// the spend limits, so protocol_test.go's table is not touched).
func init() {
	wireTypes[MethodUsageSummary] = struct{ params, result any }{UsageSummaryParams{}, UsageSummaryResult{}}
}
