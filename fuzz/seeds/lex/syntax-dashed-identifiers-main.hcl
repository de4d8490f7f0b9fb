locals {
  total     = 10
  used      = 3
  free-cpus = total - used
  my-name   = "${req.composite.metadata.name}-x"
  under_score = free-cpus*2
}

resource dash-named-resource {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = my-name }
    data = {
      free      = free-cpus
      doubled   = under_score
      spaced    = total - used
      parenthes = (total)-(used)
      selfName  = self.name
    }
  }
}
