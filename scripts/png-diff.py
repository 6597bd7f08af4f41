#!/usr/bin/env python3
"""Pixel difference of the PNG figures of two report directories (same names): per figure, the
mean absolute channel difference and the share of pixels off by more than a quarter of the
range. Usage: scripts/png-diff.py DIR_A DIR_B (pure Python, no packages)."""
import zlib,struct,sys,os
def load(p):
    d=open(p,'rb').read(); i=8; idat=b''
    while i<len(d):
        n,=struct.unpack('>I',d[i:i+4]); t=d[i+4:i+8]; c=d[i+8:i+8+n]; i+=12+n
        if t==b'IHDR': w,h,bd,ct=struct.unpack('>IIBB',c[:10])
        elif t==b'IDAT': idat+=c
    bpp={6:4,2:3}[ct]; raw=zlib.decompress(idat); stride=w*bpp; out=bytearray(); prev=bytearray(stride); p=0
    for y in range(h):
        f=raw[p]; line=bytearray(raw[p+1:p+1+stride]); p+=1+stride
        for x in range(stride):
            a=line[x-bpp] if x>=bpp else 0; b=prev[x]; c=prev[x-bpp] if x>=bpp else 0
            if f==1: line[x]=(line[x]+a)&255
            elif f==2: line[x]=(line[x]+b)&255
            elif f==3: line[x]=(line[x]+(a+b)//2)&255
            elif f==4:
                pa=abs(b-c);pb=abs(a-c);pc=abs(a+b-2*c)
                pr=a if pa<=pb and pa<=pc else (b if pb<=pc else c); line[x]=(line[x]+pr)&255
        out+=line; prev=line
    return w,h,bpp,out
A,B=sys.argv[1],sys.argv[2]
for f in sorted(os.listdir(A)):
    if not f.endswith('.png'): continue
    wa,ha,ba,pa=load(os.path.join(A,f)); wb,hb,bb,pb=load(os.path.join(B,f))
    if (wa,ha)!=(wb,hb): print(f,'size differs'); continue
    n=wa*ha; big=0; tot=0
    for k in range(n):
        da=max(abs(pa[k*ba+j]-pb[k*bb+j]) for j in range(3))
        tot+=da; big+= da>64
    print(f"{f}: {wa}x{ha}, mean |diff| {tot/n/255*100:.2f}% , pixels off by >25%: {big/n*100:.2f}%")
