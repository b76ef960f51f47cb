// SPDX-License-Identifier: MIT
// The OpenTelemetry Go SDK (1.1.0 has no logs SDK) as a peer for otel_records_crosscheck.py:
// reads "traceparent TAB otel-record" lines on stdin, one record of fieldlog's otel format each.
// For each it extracts the traceparent with the SDK's own propagator (propagation.TraceContext),
// makes a tracer provider whose resource is the record's `resource` and a tracer named by its
// `instrumentation_scope`, and ends one span, child of the extracted context, started at the
// record's `timestamp`, whose attributes are the record's call facts read under the semantic
// conventions' keys (thread.id from the SDK's semconv v1.7.0, the code attributes as named
// since). The stdout trace exporter writes the span: one JSON object per line, in the SDK's own
// names and forms.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.7.0"
	"go.opentelemetry.io/otel/trace"
)

// The code attributes under their current, stable names. The SDK packaged has semconv up to
// v1.7.0 only, where they were code.filepath, code.lineno and code.function; thread.id is the
// same in both.
const (
	codeFilePathKey     = attribute.Key("code.file.path")
	codeLineNumberKey   = attribute.Key("code.line.number")
	codeFunctionNameKey = attribute.Key("code.function.name")
)

type record struct {
	Timestamp string                     `json:"timestamp"`
	Attributes map[string]json.RawMessage `json:"attributes"`
	Resource   map[string]json.RawMessage `json:"resource"`
	Scope      struct {
		Name string `json:"name"`
	} `json:"instrumentation_scope"`
}

// attributeOf types a JSON value as the SDK would hold it: a string, a boolean, an integer
// (a number without fraction or exponent) or a float.
func attributeOf(key string, raw json.RawMessage) (attribute.KeyValue, error) {
	decoder := json.NewDecoder(strings.NewReader(string(raw)))
	decoder.UseNumber()
	var value interface{}
	if err := decoder.Decode(&value); err != nil {
		return attribute.KeyValue{}, err
	}
	switch v := value.(type) {
	case string:
		return attribute.String(key, v), nil
	case bool:
		return attribute.Bool(key, v), nil
	case json.Number:
		if !strings.ContainsAny(v.String(), ".eE") {
			i, err := v.Int64()
			return attribute.Int64(key, i), err
		}
		f, err := v.Float64()
		return attribute.Float64(key, f), err
	}
	return attribute.KeyValue{}, fmt.Errorf("%s: not a scalar: %s", key, raw)
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "otel_span_peer: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(os.Stdout))
	if err != nil {
		fail("%v", err)
	}
	propagator := propagation.TraceContext{}
	for in.Scan() {
		parts := strings.SplitN(in.Text(), "\t", 2)
		if len(parts) != 2 {
			fail("expected traceparent TAB record")
		}
		var r record
		if err := json.Unmarshal([]byte(parts[1]), &r); err != nil {
			fail("record: %v", err)
		}
		var resourceAttributes []attribute.KeyValue
		for key, raw := range r.Resource {
			kv, err := attributeOf(key, raw)
			if err != nil {
				fail("resource: %v", err)
			}
			resourceAttributes = append(resourceAttributes, kv)
		}
		var facts []attribute.KeyValue
		for _, key := range []attribute.Key{codeFilePathKey, codeLineNumberKey, codeFunctionNameKey, semconv.ThreadIDKey} {
			if raw, ok := r.Attributes[string(key)]; ok {
				kv, err := attributeOf(string(key), raw)
				if err != nil {
					fail("attributes: %v", err)
				}
				facts = append(facts, kv)
			}
		}
		nanos, err := strconv.ParseInt(r.Timestamp, 10, 64)
		if err != nil {
			fail("timestamp: %v", err)
		}

		carrier := propagation.HeaderCarrier(http.Header{})
		if parts[0] != "" {
			carrier.Set("traceparent", parts[0])
		}
		ctx := propagator.Extract(context.Background(), carrier)
		provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter), sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithResource(sdkresource.NewSchemaless(resourceAttributes...)))
		start := time.Unix(0, nanos).UTC()
		_, span := provider.Tracer(r.Scope.Name).Start(ctx, "record", trace.WithTimestamp(start), trace.WithAttributes(facts...))
		span.End(trace.WithTimestamp(start)) // the syncer exports it now
	}
	if err := in.Err(); err != nil {
		fail("%v", err)
	}
}
