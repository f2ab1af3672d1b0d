"""Sends vLLM-shaped request spans to an OTLP endpoint the way a Python exporter does.

The ExportTraceServiceRequest is built from the OpenTelemetry Python project's own protobuf
messages (opentelemetry-proto, what vLLM's OTLP exporters serialize with) and sent over OTLP/gRPC
through its generated TraceService stub, or over OTLP/HTTP as application/x-protobuf. Each span has
the name, kind, attributes (vllm/tracing SpanAttributes, seconds) and journey events vLLM emits.

    emit_spans.py --protocol grpc|http/protobuf --endpoint URL --count N

Prints one JSON line: the protocol, the spans sent and their trace ids.
"""

import argparse
import json
import time
import urllib.request

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2


def value(v):
    if isinstance(v, bool):
        return common_pb2.AnyValue(bool_value=v)
    if isinstance(v, int):
        return common_pb2.AnyValue(int_value=v)
    if isinstance(v, float):
        return common_pb2.AnyValue(double_value=v)
    return common_pb2.AnyValue(string_value=str(v))


def attributes(d):
    return [common_pb2.KeyValue(key=k, value=value(v)) for k, v in d.items()]


def vllm_span(i, start_ns):
    """Request i: 10 ms + i ms queued, 30 ms prefill, 8 tokens at 5 ms."""
    queue, prefill, decode = 0.010 + i / 1000, 0.030, 0.040
    ttft, e2e = queue + prefill, queue + prefill + decode
    attrs = {
        "gen_ai.request.id": f"cmpl-py-{i}",
        "gen_ai.response.model": "Qwen/Qwen3-0.6B",
        "gen_ai.request.max_tokens": 8,
        "gen_ai.usage.prompt_tokens": 512 + i,
        "gen_ai.usage.completion_tokens": 8,
        "gen_ai.latency.time_in_queue": queue,
        "gen_ai.latency.time_to_first_token": ttft,
        "gen_ai.latency.time_in_model_prefill": prefill,
        "gen_ai.latency.time_in_model_decode": decode,
        "gen_ai.latency.time_in_model_inference": prefill + decode,
        "gen_ai.latency.e2e": e2e,
    }
    at = lambda s: start_ns + int(round(s * 1e9))  # noqa: E731
    events = [
        trace_pb2.Span.Event(name="journey.QUEUED", time_unix_nano=at(0), attributes=attributes({"event.type": "QUEUED"})),
        trace_pb2.Span.Event(name="journey.SCHEDULED", time_unix_nano=at(queue), attributes=attributes({"schedule.kind": "FIRST"})),
        trace_pb2.Span.Event(name="journey.FIRST_TOKEN", time_unix_nano=at(ttft), attributes=attributes({"decode.done_tokens": 1})),
        trace_pb2.Span.Event(name="journey.FINISHED", time_unix_nano=at(e2e), attributes=attributes({"finish.status": "length"})),
    ]
    return trace_pb2.Span(
        trace_id=bytes.fromhex(f"7079{i:028x}"),
        span_id=bytes.fromhex(f"5e{i:014x}"),
        parent_span_id=bytes.fromhex(f"c1{i:014x}"),
        name="llm_request",
        kind=trace_pb2.Span.SPAN_KIND_SERVER,
        start_time_unix_nano=at(0),
        end_time_unix_nano=at(e2e),
        attributes=attributes(attrs),
        events=events,
    )


def export_request(count):
    start = time.time_ns()
    spans = [vllm_span(i, start + i * 1_000_000) for i in range(count)]
    resource = resource_pb2.Resource(attributes=attributes({"service.name": "vllm", "vllm.process_id": "4242"}))
    scope = common_pb2.InstrumentationScope(name="vllm.llm_engine", version="0.11.0")
    return trace_service_pb2.ExportTraceServiceRequest(
        resource_spans=[trace_pb2.ResourceSpans(resource=resource, scope_spans=[trace_pb2.ScopeSpans(scope=scope, spans=spans)])]
    )


def send_grpc(endpoint, request):
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    # As vLLM's gRPC exporter: insecure channel to host:port.
    target = endpoint.split("://", 1)[-1].rstrip("/")
    with grpc.insecure_channel(target) as channel:
        trace_service_pb2_grpc.TraceServiceStub(channel).Export(request, timeout=10)


def send_http(endpoint, request):
    req = urllib.request.Request(
        endpoint, data=request.SerializeToString(), method="POST", headers={"Content-Type": "application/x-protobuf"}
    )
    with urllib.request.urlopen(req, timeout=10) as res:
        if res.status != 200:
            raise RuntimeError(f"HTTP {res.status}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=["grpc", "http/protobuf"], required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()
    request = export_request(args.count)
    (send_grpc if args.protocol == "grpc" else send_http)(args.endpoint, request)
    spans = request.resource_spans[0].scope_spans[0].spans
    print(json.dumps({"protocol": args.protocol, "sent": len(spans), "trace_ids": [s.trace_id.hex() for s in spans]}))


if __name__ == "__main__":
    main()
