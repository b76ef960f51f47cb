// SPDX-License-Identifier: MIT
// The OpenTelemetry Go SDK's W3C propagator (propagation.TraceContext) as a peer for
// otel_crosscheck.py, with an http.Header as the carrier: reads "hex(traceparent) TAB hex(tracestate)" lines on stdin, extracts each
// pair and injects the result again, and writes one line per input in the format of
// fieldlog_trace_peer: "invalid", or "valid" TAB trace-id TAB span-id TAB flags TAB tracestate
// TAB injected traceparent TAB injected tracestate.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	propagator := propagation.TraceContext{}
	for in.Scan() {
		parts := strings.Split(in.Text(), "\t")
		if len(parts) != 2 {
			fmt.Fprintln(os.Stderr, "otel_peer: expected two hex fields per line")
			os.Exit(2)
		}
		traceparent, err1 := hex.DecodeString(parts[0])
		tracestate, err2 := hex.DecodeString(parts[1])
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "otel_peer: bad hex")
			os.Exit(2)
		}
		carrier := propagation.HeaderCarrier(http.Header{})
		if len(traceparent) > 0 {
			carrier.Set("traceparent", string(traceparent))
		}
		if len(tracestate) > 0 {
			carrier.Set("tracestate", string(tracestate))
		}
		ctx := propagator.Extract(context.Background(), carrier)
		sc := trace.SpanContextFromContext(ctx)
		if !sc.IsValid() {
			fmt.Fprintln(out, "invalid")
			continue
		}
		injected := propagation.HeaderCarrier(http.Header{})
		propagator.Inject(ctx, injected)
		fmt.Fprintf(out, "valid\t%s\t%s\t%02x\t%s\t%s\t%s\n", sc.TraceID(), sc.SpanID(), byte(sc.TraceFlags()),
			sc.TraceState().String(), injected.Get("traceparent"), injected.Get("tracestate"))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "otel_peer:", err)
		os.Exit(2)
	}
}
