"""Pure object model: plain functions over the API server's JSON dicts.

Nothing here depends on the framework; upstream counterparts live in
k8s.io/apimachinery, k8s.io/api/core/v1 and k8s.io/component-helpers.
"""
