"""The pure domain: values, lifecycles and decisions. Standard library, attrs and itself only."""
