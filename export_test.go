package drover

// TestSignals are a client's test signals (testsignals.go), for the
// tests of package drover_test.
type TestSignals = testSignals

// InitTestSignals turns on the test signals of c, a *Client of any
// transaction type, and returns them. Call it before Start: the services
// take their signals as they start.
func InitTestSignals(c any) *TestSignals {
	s := SignalsOf(c)
	s.Init()
	return s
}

// SignalsOf returns the test signals of c, a *Client of any transaction
// type, as they are: waiting on signals that are off fails the test.
func SignalsOf(c any) *TestSignals {
	return c.(interface{ testSignals() *testSignals }).testSignals()
}

// testSignals returns the client's signals.
func (c *Client[TTx]) testSignals() *testSignals { return &c.signals }
