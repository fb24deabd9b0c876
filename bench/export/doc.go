// Command export writes a dataset, prepared exactly as gnnprof's full-batch trainer feeds it to
// a model, as NumPy .npy files, so bench/torch_fullbatch.py trains PyTorch on identical inputs
// (without needing SciPy to read the original formats).
//
//	go run ./bench/export --data ../shared/data/planetoid/ind.cora --model gcn --out /tmp/cora-gcn
//
// Files: adj_{indptr,indices,val}.npy (the model's normalized adjacency in CSR, rows = targets),
// x_{indptr,indices,val}.npy (row-normalized sparse features) or x.npy (dense), labels.npy,
// {train,val,test}.npy and meta.json.
package main
