"""Pure object model: plain functions over the API server's JSON dicts.

What belongs here: reading Kubernetes objects as the API server defines them (quantities,
resources, labels and selectors, taints, node affinity, field validation with upstream's messages,
safe YAML and printable text), with upstream counterparts in k8s.io/apimachinery, k8s.io/api/core/v1
and k8s.io/component-helpers. The bottom layer: it imports nothing else of kubesched.
"""
