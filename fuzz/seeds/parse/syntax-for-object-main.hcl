locals {
  users = [
    { name = "ann", team = "red", admin = true },
    { name = "bob", team = "blue", admin = false },
    { name = "cid", team = "red", admin = false },
  ]
  byName  = { for u in users : u.name => u.team }
  byTeam  = { for u in users : u.team => u.name... }
  admins  = { for u in users : u.name => u if u.admin }
  swapped = { for k, v in byName : "${v}-${k}" => k }
  fromIdx = { for i, u in users : tostring(i) => u.name }
}

resource out {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "for-object" }
    data = {
      byName  = jsonencode(byName)
      byTeam  = jsonencode(byTeam)
      admins  = jsonencode(keys(admins))
      swapped = jsonencode(swapped)
      fromIdx = jsonencode(fromIdx)
    }
  }
}
