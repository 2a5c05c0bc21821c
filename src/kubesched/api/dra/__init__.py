"""Dynamic Resource Allocation as a pure library: the structured allocator, its CEL device
selectors and the pod-claim helpers (upstream k8s.io/dynamic-resource-allocation). Imports only
kubesched.api, the standard library and the CEL implementation."""
