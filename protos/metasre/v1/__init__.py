"""The wire contract, package metasre.v1: generated protobuf and gRPC stubs beside the protos."""
